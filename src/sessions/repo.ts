import type { Database } from "bun:sqlite";
import type { DriverName } from "../agents/agent.ts";
import type { PermissionMode } from "../config/schema.ts";
import { fromColumns } from "../shared/rows.ts";
import {
  hibernateSetting,
  isTerminal,
  LIVE_STATES,
  type PendingPermission,
  type PermissionPolicy,
  SESSION_STATES,
  type Session,
  type SessionListQuery,
  type SessionStats,
  type SessionStatus,
} from "./session.ts";

/**
 * A session as stored: the public Session plus what only ag may see (`hibernated` and `hibernate`
 * are shown from hibernatedAt and hibernateAfterMs).
 */
export interface SessionRecord extends Omit<Session, "hibernated" | "hibernate"> {
  windowId: string | null;
  paneId: string | null;
  hookSecret: string;
  transcriptPath: string | null;
  endedAt: string | null;
  endReason: string | null;
  /** Extra environment of the agent process (from the request or a template); never returned. */
  env?: Record<string, string> | null;
  /** A headless agent is offered ag's own MCP server (`offerMcp` on create). */
  offerMcp?: boolean;
  /** When its agent was ended by hibernation (the session idle, listed); null while it runs. */
  hibernatedAt?: string | null;
  /** Its own hibernation setting: null, the server's; 0, never (`hibernate: false`); else ms. */
  hibernateAfterMs?: number | null;
}

/** What may change about a session besides its state. */
export type SessionPatch = Partial<
  Pick<
    SessionRecord,
    | "updatedAt"
    | "tokenUsage"
    | "windowId"
    | "paneId"
    | "transcriptPath"
    | "permissions"
    | "hookSecret"
    | "agentVersion"
    | "verified"
    | "hibernatedAt"
  >
>;

/**
 * A session's state as stored. Written by one module only, the status writer of the live session
 * (sessions/live/writer.ts), which publishes every change it saves.
 */
export type StatusRecord = Pick<
  SessionRecord,
  "status" | "pendingPermission" | "updatedAt" | "lastActivityAt" | "endedAt" | "endReason"
>;

type Columns = SessionPatch & Partial<StatusRecord>;

interface SessionRow {
  id: string;
  name: string;
  work_dir: string;
  status: string;
  created_at: string;
  updated_at: string;
  last_activity_at: string;
  agent_command: string | null;
  permission_mode: string;
  model: string | null;
  stall_threshold_ms: number;
  parent_id: string | null;
  tenant_id: string | null;
  token_input: number;
  token_output: number;
  token_cache_read: number;
  token_cache_creation: number;
  pending_permission: string | null;
  window_id: string | null;
  pane_id: string | null;
  hook_secret: string;
  transcript_path: string | null;
  ended_at: string | null;
  end_reason: string | null;
  permission_profile: string | null;
  allow_read: number | null;
  allow_write: number | null;
  allow_bash: number | null;
  env: string | null;
  base_commit: string | null;
  managed_by: string | null;
  offer_mcp: number;
  agent: string;
  driver: string;
  agent_version: string | null;
  agent_verified: number | null;
  hibernated_at: string | null;
  hibernate_after_ms: number | null;
}

export interface SessionRepo {
  insert(session: SessionRecord): void;
  get(id: string): SessionRecord | null;
  update(id: string, patch: SessionPatch): void;
  /** Only for the status writer (sessions/live/writer.ts). */
  saveStatus(id: string, status: StatusRecord): void;
  list(query?: SessionListQuery): SessionRecord[];
  /** Sessions in a live state, oldest first (re-adoption order). */
  live(): SessionRecord[];
  stats(): SessionStats;
  /** Removes terminal sessions that ended before `before` (ISO); returns how many. */
  pruneEnded(before: string): number;
}

const LIVE_LIST = LIVE_STATES.map((s) => `'${s}'`).join(",");

const COLUMNS: Record<keyof Columns, (p: Columns) => Record<string, unknown>> = {
  status: (p) => ({ status: p.status }),
  updatedAt: (p) => ({ updated_at: p.updatedAt }),
  lastActivityAt: (p) => ({ last_activity_at: p.lastActivityAt }),
  pendingPermission: (p) => ({
    pending_permission: p.pendingPermission ? JSON.stringify(p.pendingPermission) : null,
  }),
  tokenUsage: (p) => ({
    token_input: p.tokenUsage?.input,
    token_output: p.tokenUsage?.output,
    token_cache_read: p.tokenUsage?.cacheRead,
    token_cache_creation: p.tokenUsage?.cacheCreation,
  }),
  windowId: (p) => ({ window_id: p.windowId }),
  paneId: (p) => ({ pane_id: p.paneId }),
  transcriptPath: (p) => ({ transcript_path: p.transcriptPath }),
  endedAt: (p) => ({ ended_at: p.endedAt }),
  endReason: (p) => ({ end_reason: p.endReason }),
  hookSecret: (p) => ({ hook_secret: p.hookSecret }),
  agentVersion: (p) => ({ agent_version: p.agentVersion }),
  hibernatedAt: (p) => ({ hibernated_at: p.hibernatedAt ?? null }),
  verified: (p) => ({
    agent_verified: p.verified === null || p.verified === undefined ? null : Number(p.verified),
  }),
  permissions: (p) => ({
    permission_profile: p.permissions?.profile ?? null,
    allow_read: p.permissions ? Number(p.permissions.allowRead) : null,
    allow_write: p.permissions ? Number(p.permissions.allowWrite) : null,
    allow_bash: p.permissions ? Number(p.permissions.allowBash) : null,
  }),
};

export function createSessionRepo(db: Database): SessionRepo {
  const insert = db.query(`
    INSERT INTO sessions (id, name, work_dir, status, created_at, updated_at, last_activity_at, agent_command,
      permission_mode, stall_threshold_ms, parent_id, tenant_id, token_input, token_output, token_cache_read,
      token_cache_creation, pending_permission, window_id, pane_id, hook_secret, transcript_path, ended_at, end_reason,
      env, base_commit, managed_by, agent, driver, offer_mcp, agent_version, agent_verified, model,
      hibernate_after_ms)
    VALUES ($id, $name, $workDir, $status, $createdAt, $updatedAt, $lastActivityAt, $agentCommand,
      $permissionMode, $stallThresholdMs, $parentId, $tenantId, $input, $output, $cacheRead, $cacheCreation,
      $pendingPermission, $windowId, $paneId, $hookSecret, $transcriptPath, $endedAt, $endReason, $env, $baseCommit, $managedBy, $agent, $driver, $offerMcp,
      $agentVersion, $verified, $model, $hibernateAfterMs)`);
  const byId = db.query<SessionRow, [string]>("SELECT * FROM sessions WHERE id = ?");
  const list = db.query<SessionRow, { status: string | null; live: number; workDir: string | null }>(`
    SELECT * FROM sessions
    WHERE ($status IS NULL OR status = $status)
      AND ($live = 0 OR status IN (${LIVE_LIST}))
      AND ($workDir IS NULL OR instr(work_dir, $workDir) > 0)
    ORDER BY created_at DESC, rowid DESC`);
  const live = db.query<SessionRow, []>(
    `SELECT * FROM sessions WHERE status IN (${LIVE_LIST}) ORDER BY created_at, rowid`,
  );
  const counts = db.query<{ status: string; n: number }, []>(
    "SELECT status, count(*) AS n FROM sessions GROUP BY status",
  );
  const prune = db.query(
    `DELETE FROM sessions WHERE status NOT IN (${LIVE_LIST}) AND ended_at IS NOT NULL AND ended_at < ?`,
  );
  const updates = new Map<string, ReturnType<typeof db.query>>();

  function write(id: string, patch: Columns): void {
    const values: Record<string, unknown> = {};
    for (const key of Object.keys(patch) as (keyof Columns)[]) Object.assign(values, COLUMNS[key](patch));
    const columns = Object.keys(values);
    if (columns.length === 0) return;
    const sql = `UPDATE sessions SET ${columns.map((c) => `${c} = $${c}`).join(", ")} WHERE id = $id`;
    let statement = updates.get(sql);
    if (!statement) {
      statement = db.query(sql);
      updates.set(sql, statement);
    }
    statement.run({ ...values, id } as never);
  }

  return {
    insert(s) {
      insert.run({
        id: s.id,
        name: s.name,
        workDir: s.workDir,
        status: s.status,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
        lastActivityAt: s.lastActivityAt,
        agentCommand: s.agentCommand,
        permissionMode: s.permissionMode,
        stallThresholdMs: s.stallThresholdMs,
        parentId: s.parentId,
        tenantId: s.tenantId,
        input: s.tokenUsage.input,
        output: s.tokenUsage.output,
        cacheRead: s.tokenUsage.cacheRead,
        cacheCreation: s.tokenUsage.cacheCreation,
        pendingPermission: s.pendingPermission ? JSON.stringify(s.pendingPermission) : null,
        windowId: s.windowId,
        paneId: s.paneId,
        hookSecret: s.hookSecret,
        transcriptPath: s.transcriptPath,
        endedAt: s.endedAt,
        endReason: s.endReason,
        env: s.env && Object.keys(s.env).length ? JSON.stringify(s.env) : null,
        baseCommit: s.baseCommit,
        managedBy: s.managedBy,
        agent: s.agent,
        driver: s.driver,
        offerMcp: s.offerMcp ? 1 : 0,
        agentVersion: s.agentVersion,
        verified: s.verified === null ? null : Number(s.verified),
        model: s.model,
        hibernateAfterMs: s.hibernateAfterMs ?? null,
      });
      if (s.permissions) write(s.id, { permissions: s.permissions });
    },
    get(id) {
      const row = byId.get(id);
      return row ? toRecord(row) : null;
    },
    update: (id, patch) => write(id, patch),
    saveStatus: (id, status) => write(id, status),
    list(query = {}) {
      const running = query.status === "running";
      return list
        .all({
          status: running ? null : (query.status ?? null),
          live: running ? 1 : 0,
          workDir: query.workDir ?? null,
        })
        .map(toRecord);
    },
    live: () => live.all().map(toRecord),
    stats: () => countStats(counts.all()),
    pruneEnded: (before) => prune.run(before).changes,
  };
}

/** Counts by state as SessionStats: from SQL's GROUP BY, or from a list of sessions. */
function countStats(counts: Iterable<{ status: string; n: number }>): SessionStats {
  const byStatus: Record<string, number> = Object.fromEntries(SESSION_STATES.map((s) => [s, 0]));
  for (const { status, n } of counts) byStatus[status] = (byStatus[status] ?? 0) + n;
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const active = LIVE_STATES.reduce((sum, s) => sum + (byStatus[s] ?? 0), 0);
  return { total, active, idle: byStatus.idle ?? 0, stalled: byStatus.stalled ?? 0, byStatus };
}

export function statsOf(sessions: ReadonlyArray<{ status: string }>): SessionStats {
  return countStats(sessions.map((s) => ({ status: s.status, n: 1 })));
}

/** The public object: every route answers this, and it never carries a secret. */
export function toSession(record: SessionRecord): Session {
  return {
    id: record.id,
    name: record.name,
    workDir: record.workDir,
    agent: record.agent,
    driver: record.driver,
    status: record.status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastActivityAt: record.lastActivityAt,
    agentCommand: record.agentCommand,
    agentVersion: record.agentVersion,
    verified: record.verified,
    permissionMode: record.permissionMode,
    model: record.model,
    stallThresholdMs: record.stallThresholdMs,
    parentId: record.parentId,
    tenantId: record.tenantId,
    tokenUsage: record.tokenUsage,
    pendingPermission: record.pendingPermission,
    permissions: record.permissions,
    baseCommit: record.baseCommit,
    managedBy: record.managedBy,
    hibernated: Boolean(record.hibernatedAt) && !isTerminal(record.status),
    hibernate: hibernateSetting(record.hibernateAfterMs ?? null),
    endedAt: record.endedAt,
    endReason: record.endReason,
  };
}

/** The columns that are a record's fields as they are (the others are parsed or folded below). */
const PLAIN_COLUMNS = [
  "id",
  "name",
  "work_dir",
  "agent",
  "created_at",
  "updated_at",
  "last_activity_at",
  "agent_command",
  "agent_version",
  "model",
  "stall_threshold_ms",
  "parent_id",
  "tenant_id",
  "window_id",
  "pane_id",
  "hook_secret",
  "transcript_path",
  "ended_at",
  "end_reason",
  "base_commit",
  "managed_by",
  "hibernated_at",
  "hibernate_after_ms",
] as const satisfies readonly (keyof SessionRow)[];

function toRecord(row: SessionRow): SessionRecord {
  return {
    ...fromColumns(row, PLAIN_COLUMNS),
    driver: row.driver as DriverName,
    status: row.status as SessionStatus,
    verified: row.agent_verified === null ? null : row.agent_verified === 1,
    permissionMode: row.permission_mode as PermissionMode,
    tokenUsage: {
      input: row.token_input,
      output: row.token_output,
      cacheRead: row.token_cache_read,
      cacheCreation: row.token_cache_creation,
    },
    pendingPermission: row.pending_permission
      ? (JSON.parse(row.pending_permission) as PendingPermission)
      : null,
    env: row.env ? (JSON.parse(row.env) as Record<string, string>) : null,
    offerMcp: row.offer_mcp === 1,
    permissions: row.permission_profile
      ? {
          profile: row.permission_profile as PermissionPolicy["profile"],
          allowRead: row.allow_read === 1,
          allowWrite: row.allow_write === 1,
          allowBash: row.allow_bash === 1,
        }
      : null,
  };
}
