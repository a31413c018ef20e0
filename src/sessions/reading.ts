import { emptySummary } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { transcriptOwner, transcriptSource } from "../drivers/driver.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import type { CursorQuery, TranscriptCursorPage, TranscriptFormat } from "../transcript/cursor.ts";
import { createTranscriptFollower, type TranscriptFollower } from "./live/follower.ts";
import type { LiveSessions } from "./live/registry.ts";
import type { SessionRecord } from "./repo.ts";
import type { ReadResult } from "./session.ts";

/** How long `/read` waits for the agent to flush a finished turn to its transcript. */
const READ_SETTLE_MS = 3_000;

const EMPTY_PAGE: TranscriptCursorPage = { messages: [], has_more: false, oldest_id: 0, newest_id: 0 };

/**
 * A session's transcript file as the cursor reads it: where it is (recorded, or found by the
 * agent), its format (the agent's, or ag's own for a headless session) and the uid that must own
 * it. Null while the agent has written none.
 */
export async function transcriptFileOf(
  rec: SessionRecord,
  agents: Pick<AgentRegistry, "get">,
  owners?: TenantUsers,
): Promise<{ path: string; format: TranscriptFormat; owner?: number } | null> {
  const agent = transcriptSource(rec, agents.get(rec.agent, rec.agentVersion));
  const path = rec.transcriptPath ?? (await agent.transcript.find(rec.workDir, rec.id));
  return path ? { path, format: agent.transcript.format, owner: transcriptOwner(rec, owners) } : null;
}

/** Reading a session's conversation: `/read` and the transcript cursor, live or ended. */
export type SessionReading = ReturnType<typeof createSessionReading>;

export function createSessionReading(deps: {
  record(id: string): SessionRecord;
  live: Pick<LiveSessions, "get">;
  agents: Pick<AgentRegistry, "get">;
  /** A tenant's runAs user: its sessions' transcripts must be that user's files. */
  owners?: TenantUsers;
  logger: Logger;
}) {
  /** The live session's transcript, or, for one that ended, a reading of its file as history. */
  async function transcriptOf(id: string): Promise<TranscriptFollower | null> {
    const rec = deps.record(id);
    const agent = transcriptSource(rec, deps.agents.get(rec.agent, rec.agentVersion));
    const session = deps.live.get(id);
    if (session) {
      if (!session.transcript.path) {
        const found = await agent.transcript.find(rec.workDir, id);
        if (found) await session.attachTranscript(found, false);
      }
      return session.transcript;
    }
    const file = await transcriptFileOf(rec, deps.agents, deps.owners);
    if (!file) return null;
    const { path } = file;
    const follower = createTranscriptFollower({
      agent,
      owner: file.owner,
      logger: deps.logger,
      onLine: () => {},
    });
    await follower.attach(path, true);
    // Watched only while this request looks at it (read's settle wait), then let go.
    setTimeout(() => follower.stop(), READ_SETTLE_MS + 500).unref?.();
    return follower;
  }

  return {
    async read(id: string): Promise<ReadResult> {
      const transcript = await transcriptOf(id);
      const { status } = deps.record(id);
      // A turn that is over by the hooks may not be fully written down yet, nor even begun in
      // the file (its prompt's line comes late after a quick turn): wait for it, briefly.
      const live = deps.live.get(id);
      if (transcript && status !== "working" && status !== "stalled")
        await (live ? live.settleTranscript(READ_SETTLE_MS) : transcript.settled(READ_SETTLE_MS));
      const rec = deps.record(id);
      const tokens = transcript?.tokens() ?? rec.tokenUsage;
      return {
        id,
        status: rec.status,
        output: transcript?.output() ?? "",
        tokenUsage: { input: tokens.input, output: tokens.output },
      };
    },

    /** The conversation condensed (counts, tools, files, last messages) and its tokens. */
    async summary(id: string) {
      const transcript = await transcriptOf(id);
      if (transcript) await transcript.catchUp();
      const rec = deps.record(id);
      return {
        tokens: transcript?.tokens() ?? rec.tokenUsage,
        tokensByModel: transcript?.tokensByModel() ?? {},
        summary: transcript?.summary() ?? emptySummary(),
      };
    },

    async cursor(id: string, query: CursorQuery): Promise<TranscriptCursorPage> {
      const transcript = await transcriptOf(id);
      return transcript ? transcript.page(query) : EMPTY_PAGE;
    },
  };
}
