import type { Database } from "bun:sqlite";
import type { PermissionMode } from "../config/schema.ts";
import {
  LIVE_STATES,
  SESSION_STATES,
  type Session,
  type SessionListQuery,
  type SessionStats,
  type SessionStatus,
} from "./session.ts";

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
  stall_threshold_ms: number;
  parent_id: string | null;
  tenant_id: string | null;
  token_input: number;
  token_output: number;
  token_cache_read: number;
  token_cache_creation: number;
  pending_permission: string | null;
}

export interface SessionRepo {
  insert(session: Session): void;
  get(id: string): Session | null;
  list(query?: SessionListQuery): Session[];
  stats(): SessionStats;
}

const LIVE_LIST = LIVE_STATES.map((s) => `'${s}'`).join(",");

export function createSessionRepo(db: Database): SessionRepo {
  const insert = db.query(`
    INSERT INTO sessions (id, name, work_dir, status, created_at, updated_at, last_activity_at, agent_command,
      permission_mode, stall_threshold_ms, parent_id, tenant_id, token_input, token_output, token_cache_read,
      token_cache_creation, pending_permission)
    VALUES ($id, $name, $workDir, $status, $createdAt, $updatedAt, $lastActivityAt, $agentCommand,
      $permissionMode, $stallThresholdMs, $parentId, $tenantId, $input, $output, $cacheRead, $cacheCreation,
      $pendingPermission)`);
  const byId = db.query<SessionRow, [string]>("SELECT * FROM sessions WHERE id = ?");
  const list = db.query<SessionRow, { status: string | null; live: number; workDir: string | null }>(`
    SELECT * FROM sessions
    WHERE ($status IS NULL OR status = $status)
      AND ($live = 0 OR status IN (${LIVE_LIST}))
      AND ($workDir IS NULL OR instr(work_dir, $workDir) > 0)
    ORDER BY created_at DESC, rowid DESC`);
  const counts = db.query<{ status: string; n: number }, []>(
    "SELECT status, count(*) AS n FROM sessions GROUP BY status",
  );

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
      });
    },
    get(id) {
      const row = byId.get(id);
      return row ? toSession(row) : null;
    },
    list(query = {}) {
      const running = query.status === "running";
      return list
        .all({
          status: running ? null : (query.status ?? null),
          live: running ? 1 : 0,
          workDir: query.workDir ?? null,
        })
        .map(toSession);
    },
    stats() {
      const byStatus: Record<string, number> = Object.fromEntries(SESSION_STATES.map((s) => [s, 0]));
      for (const { status, n } of counts.all()) byStatus[status] = n;
      const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
      const active = LIVE_STATES.reduce((sum, s) => sum + (byStatus[s] ?? 0), 0);
      return { total, active, idle: byStatus.idle ?? 0, stalled: byStatus.stalled ?? 0, byStatus };
    },
  };
}

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    name: row.name,
    workDir: row.work_dir,
    status: row.status as SessionStatus,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
    agentCommand: row.agent_command,
    permissionMode: row.permission_mode as PermissionMode,
    stallThresholdMs: row.stall_threshold_ms,
    parentId: row.parent_id,
    tenantId: row.tenant_id,
    tokenUsage: {
      input: row.token_input,
      output: row.token_output,
      cacheRead: row.token_cache_read,
      cacheCreation: row.token_cache_creation,
    },
    pendingPermission: row.pending_permission ? JSON.parse(row.pending_permission) : null,
  };
}
