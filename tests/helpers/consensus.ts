import { Database } from "bun:sqlite";
import { filesChange } from "../../src/consensus/change.ts";
import { type ConsensusService, createConsensusService } from "../../src/consensus/index.ts";
import type { EventBus } from "../../src/events/bus.ts";
import { consensusRoutes } from "../../src/server/routes/consensus.ts";
import type { Session, SessionService } from "../../src/sessions/index.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { sampleInput } from "./events.ts";

/**
 * The real consensus service and routes, with scripted reviewers instead of agents: each
 * reviewer session "answers" its brief with the next text of its script (its restatement, the
 * one after), at once or when the test releases it. The reviewed session is looked up in the
 * test app (`lookup`), so the CLI and the MCP tools name it as they would any session.
 */
export interface ScriptedReviews {
  service: ConsensusService;
  plugin: ReturnType<typeof consensusRoutes>;
  /** The answers of reviewer N (1-based) are `answers[N - 1]`, one per turn; none: it answers "". */
  script(answers: string[][], options?: { hold?: boolean }): void;
  /** Held reviewers answer now (their turn ends on the bus, as a real one's would). */
  release(): void;
  /** Briefs and restatements sent to reviewers, in order. */
  sent: string[];
  /** Whose each reviewer session was made (the owner given to create), by reviewer name. */
  owners: Map<string, unknown>;
}

/** A reviewer's answer in the form the service reads. */
export function answer(
  verdict: "APPROVE" | "REJECT",
  marks: Array<"PASS" | "FAIL">,
  note = "checked",
): string {
  return [...marks.map((m, i) => `CRITERION ${i + 1}: ${m} — ${note} ${i + 1}`), `VERDICT: ${verdict}`].join(
    "\n",
  );
}

export function scriptedReviews(bus: EventBus, lookup: (id: string) => Session): ScriptedReviews {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  let answers: string[][] = [];
  let hold = false;
  const sent: string[] = [];
  const owners = new Map<string, unknown>();
  const reviewers = new Map<string, { index: number; name: string; turns: number; status: string }>();
  const held = new Set<string>();

  const sessions = {
    get(id: string) {
      const r = reviewers.get(id);
      if (!r) return lookup(id);
      return { id, name: r.name, workDir: "/tmp", status: r.status } as unknown as Session;
    },
    /** A tenant's key sees its tenant's sessions (this fake knows no session keys). */
    sees(owner: { tenantId?: string | null } | undefined, id: string) {
      const tenantId = owner?.tenantId ?? null;
      if (tenantId === null) return true;
      try {
        return sessions.get(id).tenantId === tenantId;
      } catch {
        return false;
      }
    },
    async create(input: { name?: string }, owner?: unknown) {
      const id = crypto.randomUUID();
      const name = input.name ?? id;
      owners.set(name, owner);
      reviewers.set(id, { index: Number(/-(\d+)$/.exec(name)?.[1] ?? 1), name, turns: 0, status: "idle" });
      return { session: { id } };
    },
    async send(id: string, text: string) {
      sent.push(text);
      const r = reviewers.get(id)!;
      r.turns++;
      r.status = "working";
      if (hold) held.add(id);
      else r.status = "idle";
      return { delivered: true, attempts: 1 };
    },
    async read(id: string) {
      const r = reviewers.get(id);
      const output = r ? (answers[r.index - 1]?.[r.turns - 1] ?? "") : "Done: the work is finished.";
      return { id, status: "idle", output, tokenUsage: { input: 0, output: 0 } };
    },
    async kill(id: string) {
      const r = reviewers.get(id);
      if (r) r.status = "killed";
      return {};
    },
    async summary() {
      return { filesTouched: [] };
    },
    async metrics() {
      return {
        tokens: { input: 100, output: 50, cacheRead: 0, cacheCreation: 0 },
        estimatedCost: { usd: 0.01 },
      };
    },
    setProfile() {},
    async answer() {},
  } as unknown as Pick<
    SessionService,
    "get" | "sees" | "create" | "send" | "read" | "kill" | "summary" | "metrics" | "setProfile" | "answer"
  >;

  const service = createConsensusService({
    db,
    sessions,
    bus,
    clock: systemClock,
    logger: createLogger({ level: "error", json: true, stream: { write: () => true } as never }),
    timeoutMs: 60_000,
    // No git (a unit test starts no process): the files the session wrote, as outside a repository.
    change: async (session, runAs = null) => filesChange(session.workDir, session.filesTouched, runAs),
  });
  return {
    service,
    plugin: consensusRoutes(service),
    sent,
    owners,
    script(next, options = {}) {
      answers = next;
      hold = options.hold ?? false;
    },
    release() {
      hold = false;
      for (const id of held) {
        const r = reviewers.get(id)!;
        r.status = "idle";
        bus.publish(
          sampleInput("session.turn_ended", {
            session: { id, name: r.name, workDir: "/tmp" },
            detail: "idle",
          }),
        );
      }
      held.clear();
    },
  };
}
