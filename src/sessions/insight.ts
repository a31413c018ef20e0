import { type Static, Type } from "@sinclair/typebox";
import type { AgentPlace, SessionDrivers } from "../drivers/index.ts";
import type { Clock } from "../shared/clock.ts";
import type { LiveSessions } from "./live/registry.ts";
import { estimateCost, type Price, type PriceTable } from "./pricing.ts";
import type { SessionReading } from "./reading.ts";
import type { SessionRecord } from "./repo.ts";
import { isTerminal, SessionStatus } from "./session.ts";

export const Percentiles = Type.Object({
  count: Type.Integer(),
  p50: Type.Union([Type.Number(), Type.Null()]),
  p90: Type.Union([Type.Number(), Type.Null()]),
  max: Type.Union([Type.Number(), Type.Null()]),
});

/** The agent's process and everything it started, as the kernel counts them (Linux /proc). */
export const AgentProcess = Type.Object({
  pid: Type.Integer({ description: "the agent's process (its pane's)" }),
  processes: Type.Integer({ description: "it and every process it started" }),
  rssBytes: Type.Integer({ description: "resident memory of them all" }),
  cpuPercent: Type.Union([Type.Number(), Type.Null()], {
    description: "share of one core since the last measure (its whole life the first time)",
  }),
});

export const SessionHealth = Type.Object({
  id: Type.String(),
  status: SessionStatus,
  alive: Type.Boolean({
    description: "the agent's process runs: in its pane (tmux), or as ag's child (acp, headless)",
  }),
  pane: Type.Union([Type.Object({ windowId: Type.String(), paneId: Type.String() }), Type.Null()]),
  agentPid: Type.Union([Type.Integer(), Type.Null()], {
    description: "the agent's process: its pane's (tmux), or ag's ACP child (acp)",
  }),
  idleMs: Type.Integer({ description: "since the agent's last sign of activity" }),
  hints: Type.Array(Type.String(), { description: "what to do next" }),
});

export const SessionSummary = Type.Object({
  id: Type.String(),
  status: SessionStatus,
  messages: Type.Object({ user: Type.Integer(), assistant: Type.Integer(), system: Type.Integer() }),
  turns: Type.Integer(),
  toolCalls: Type.Integer(),
  toolCallsByName: Type.Record(Type.String(), Type.Integer()),
  toolErrors: Type.Integer(),
  filesTouched: Type.Array(Type.String()),
  lastUserMessage: Type.Union([Type.String(), Type.Null()]),
  lastAssistantMessage: Type.Union([Type.String(), Type.Null()]),
  tokens: Type.Object({
    input: Type.Integer(),
    output: Type.Integer(),
    cacheRead: Type.Integer(),
    cacheCreation: Type.Integer(),
  }),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  lastEntryAt: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
});

export const SessionMetrics = Type.Object({
  id: Type.String(),
  tokens: SessionSummary.properties.tokens,
  estimatedCost: Type.Object({
    usd: Type.Number({ description: "estimate from the price table (pricing in config)" }),
    unpriced: Type.Array(Type.String(), {
      description:
        "models with no price of their own: priced by budgets.defaultPrice when set, else not in usd",
    }),
  }),
  turns: Type.Integer(),
  toolCalls: Type.Integer(),
  deliveries: Type.Object({
    sent: Type.Integer(),
    delivered: Type.Integer(),
    failed: Type.Integer(),
    attempts: Type.Integer(),
  }),
  timeInStateMs: Type.Record(Type.String(), Type.Integer(), {
    description: "since ag started following the session",
  }),
  followingSince: Type.String({ format: "date-time" }),
  agentProcess: Type.Union([AgentProcess, Type.Null()], {
    description: "what the agent costs the host now; null once it has ended, or without /proc",
  }),
});

export const SessionLatency = Type.Object({
  id: Type.String(),
  deliveryMs: Percentiles,
  stateDetectionMs: Percentiles,
});

/** Health with hints, summary, metrics and latency of one session. */
export function createSessionInsight(deps: {
  record(id: string): SessionRecord;
  reading: Pick<SessionReading, "summary">;
  live: Pick<LiveSessions, "get">;
  /** Where each session's agent runs (its pid, its pane): its driver knows. */
  drivers: Pick<SessionDrivers, "of" | "all">;
  clock: Clock;
  prices: PriceTable;
  /** What a model with no price costs (budgets.defaultPrice); absent: not counted. */
  defaultPrice?: Price;
  /** Process trees by root pid (the host domain); absent: no process figures. */
  processes?: (roots: ReadonlyMap<string, number>) => Promise<Map<string, Static<typeof AgentProcess>>>;
}) {
  const { reading } = deps;

  /** Where a running session's agent is, as its driver says (nothing once it ended). */
  async function placeOf(rec: SessionRecord): Promise<AgentPlace | undefined> {
    if (isTerminal(rec.status)) return undefined;
    return (await deps.drivers.of(rec).locate([rec])).get(rec.id);
  }

  /** Every running session's agent process tree: one look per driver, one pass over /proc. */
  async function agentProcesses(records: readonly SessionRecord[]) {
    const none = new Map<string, Static<typeof AgentProcess>>();
    if (!deps.processes || records.length === 0) return none;
    const running = records.filter((rec) => !isTerminal(rec.status));
    const roots = new Map<string, number>();
    for (const driver of deps.drivers.all()) {
      const own = running.filter((rec) => deps.drivers.of(rec) === driver);
      if (own.length === 0) continue;
      // A transport that cannot be asked (tmux down) says where none of its agents run: nothing
      // to measure of them (health must still answer).
      const places = await driver.locate(own).catch(() => new Map<string, AgentPlace>());
      for (const [id, place] of places) if (place.pid !== null) roots.set(id, place.pid);
    }
    return deps.processes(roots);
  }

  /** The pid at the root of a running session's agent: its ACP child, or its pane's process. */
  async function agentPid(id: string): Promise<number | null> {
    const place = await placeOf(deps.record(id)).catch(() => undefined);
    return place?.pid ?? null;
  }

  async function agentProcess(rec: SessionRecord): Promise<Static<typeof AgentProcess> | null> {
    const place = await placeOf(rec);
    if (!deps.processes || !place || place.pid === null) return null;
    return (await deps.processes(new Map([[rec.id, place.pid]]))).get(rec.id) ?? null;
  }

  async function health(id: string): Promise<Static<typeof SessionHealth>> {
    const rec = deps.record(id);
    // Where the agent runs, as its driver says: a headless one is ag's child, without a pane.
    const place = await placeOf(rec).catch(() => undefined);
    const pane = place?.pane ?? null;
    const alive = place !== undefined && place.pid !== null && !pane?.dead;
    const idleMs = Math.max(0, deps.clock.now() - Date.parse(rec.lastActivityAt));
    return {
      id,
      status: rec.status,
      alive,
      pane: pane ? { windowId: pane.windowId, paneId: pane.paneId } : null,
      agentPid: alive ? place.pid : null,
      idleMs,
      hints: hintsFor(rec, idleMs),
    };
  }

  async function summary(id: string): Promise<Static<typeof SessionSummary>> {
    const { tokens, summary: s } = await reading.summary(id);
    return { id, status: deps.record(id).status, ...s, tokens };
  }

  async function metrics(id: string): Promise<Static<typeof SessionMetrics>> {
    const rec = deps.record(id);
    const { tokens, tokensByModel, summary: s } = await reading.summary(id);
    const live = deps.live.get(id);
    const timeInState: Record<string, number> = { ...(live?.stats.timeInState ?? {}) };
    if (live)
      timeInState[rec.status] = (timeInState[rec.status] ?? 0) + (deps.clock.now() - live.stats.statusSince);
    return {
      id,
      tokens,
      estimatedCost: estimateCost(tokensByModel, deps.prices, deps.defaultPrice),
      turns: s.turns,
      toolCalls: s.toolCalls,
      deliveries: live?.stats.deliveries ?? { sent: 0, delivered: 0, failed: 0, attempts: 0 },
      timeInStateMs: timeInState,
      followingSince: new Date(live?.stats.followingSince ?? Date.parse(rec.createdAt)).toISOString(),
      agentProcess: await agentProcess(rec),
    };
  }

  function latency(id: string): Static<typeof SessionLatency> {
    deps.record(id);
    const stats = deps.live.get(id)?.stats;
    return {
      id,
      deliveryMs: percentiles(stats?.deliveryMs ?? []),
      stateDetectionMs: percentiles(stats?.detectionMs ?? []),
    };
  }

  return { health, summary, metrics, latency, agentProcesses, agentPid };
}

/** Who reads a hint: a REST client is told routes, an MCP client (`ag mcp`) the tools to call. */
export type HintAudience = "rest" | "mcp";

/** What a client can do next, in the session's own words (with the routes, or tools, to call). */
export function hintsFor(
  rec: Pick<SessionRecord, "id" | "status" | "pendingPermission">,
  idleMs: number,
  audience: HintAudience = "rest",
): string[] {
  const base = `/v1/sessions/${rec.id}`;
  const mcp = audience === "mcp";
  const on = `(sessionId "${rec.id}")`;
  switch (rec.status) {
    case "permission_prompt": {
      const what = rec.pendingPermission
        ? `${rec.pendingPermission.tool ?? rec.pendingPermission.kind}: ${rec.pendingPermission.detail}`
        : "a permission";
      return [
        mcp
          ? `waiting for permission (${what}): call approve_permission or reject_permission ${on}`
          : `waiting for permission (${what}): POST ${base}/approve or POST ${base}/reject`,
      ];
    }
    case "asking": {
      const pending = rec.pendingPermission;
      const options = pending?.options?.map((o) => `${o.index}. ${o.label}`).join(", ");
      const asked = `the agent asks a question (${pending?.question ?? pending?.detail ?? "see the pane"}${options ? `; ${options}` : ""})`;
      const range = pending?.options?.length ? `option 1–${pending.options.length}` : "option N";
      return [
        mcp
          ? `${asked}: call answer_question ${on} with ${range} or text of your own (or reject_permission to dismiss it)`
          : `${asked}: POST ${base}/answer {"option": N} or {"text": "…"} (or POST ${base}/send the answer)`,
      ];
    }
    case "stalled":
      return [
        mcp
          ? `no agent activity for ${Math.round(idleMs / 1000)} s: call send_message ${on} with a nudge, interrupt_session, or kill_session`
          : `no agent activity for ${Math.round(idleMs / 1000)} s: POST ${base}/send a nudge, POST ${base}/interrupt, or DELETE ${base}`,
      ];
    case "working":
      return [
        mcp
          ? `working: wait, then call get_status ${on} again; get_transcript shows its progress`
          : `working: wait, or follow GET ${base}/read`,
      ];
    case "idle":
      return [
        mcp
          ? `ready for a prompt: call send_message ${on}; get_transcript reads its replies`
          : `ready for a prompt: POST ${base}/send`,
      ];
    case "crashed":
      return [
        mcp
          ? `the agent ended unexpectedly: get_transcript ${on} shows its last entries; create_session starts a new one`
          : `the agent ended unexpectedly: POST ${base}/resume continues its conversation`,
      ];
    default:
      return [
        mcp
          ? `the session has ended: get_transcript ${on} reads what it did; create_session starts a new one`
          : `the session has ended: POST ${base}/resume continues its conversation`,
      ];
  }
}

export function percentiles(samples: number[]): Static<typeof Percentiles> {
  if (samples.length === 0) return { count: 0, p50: null, p90: null, max: null };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1]! };
}
