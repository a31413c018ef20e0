import { randomBytes } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, join } from "node:path";
import type { DriverName } from "../agents/agent.ts";

export { assertTypeable } from "../drivers/driver.ts";

import { createTenantPolicy, type TenantPolicy } from "../auth/tenants.ts";
import type { PermissionMode } from "../config/schema.ts";
import { AgError } from "../shared/errors.ts";
import type { SessionDefaults } from "./deps.ts";
import type { SessionRecord } from "./repo.ts";
import type { CreateSessionInput } from "./session.ts";

/** Pure helpers of session creation: validation, names, records, the memory-context prompt. */

/**
 * Checks a workDir given by a caller and returns it normalised: its real path, with `.` and `..`
 * resolved and every symlink followed. That path is the one stored, listed, launched in and
 * trusted, so `/a/b/../../root` or a link to elsewhere never shows or runs as something it is not.
 */
export function validateWorkDir(workDir: string): string {
  if (!isAbsolute(workDir))
    throw new AgError("INVALID_WORKDIR", `workDir must be an absolute path, got "${workDir}"`);
  if (!existsSync(workDir)) throw new AgError("INVALID_WORKDIR", `workDir does not exist: ${workDir}`);
  if (!statSync(workDir).isDirectory())
    throw new AgError("INVALID_WORKDIR", `workDir is not a directory: ${workDir}`);
  return realpathSync(workDir);
}

/** Without tenantWorkdirs every folder is allowed; the path is still resolved at the launch. */
const UNRESTRICTED = createTenantPolicy({});

/**
 * Where a session's agent starts, decided immediately before it does (every launch: create, fork,
 * spawn, resume, a reopen after a restart): its workDir resolved now and checked against its
 * tenant's folders on that real path, which becomes the process's cwd — never the stored path,
 * whose folders may have been swapped for links since. TENANT_WORKDIR_DENIED or INVALID_WORKDIR.
 */
export function launchDir(
  tenants: Pick<TenantPolicy, "launchDir"> | undefined,
  rec: Pick<SessionRecord, "tenantId" | "workDir">,
): string {
  return (tenants ?? UNRESTRICTED).launchDir(rec.tenantId, rec.workDir);
}

export function defaultName(workDir: string, id: string): string {
  return `${basename(workDir) || "session"}-${id.slice(0, 8)}`;
}

export function newHookSecret(): string {
  return randomBytes(32).toString("hex");
}

export function sessionDir(stateDir: string, id: string): string {
  return join(stateDir, "sessions", id);
}

export function newRecord(input: {
  id: string;
  name: string;
  workDir: string;
  agent: string;
  driver?: DriverName;
  agentCommand: string | null;
  permissionMode: PermissionMode;
  model?: string | null;
  stallThresholdMs: number;
  parentId?: string | null;
  tenantId?: string | null;
  baseCommit?: string | null;
  managedBy?: string | null;
  offerMcp?: boolean;
  hibernateAfterMs?: number | null;
  now: number;
}): SessionRecord {
  const at = new Date(input.now).toISOString();
  return {
    id: input.id,
    name: input.name,
    workDir: input.workDir,
    agent: input.agent,
    driver: input.driver ?? "tmux",
    status: "working",
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    agentCommand: input.agentCommand,
    agentVersion: null,
    verified: null,
    permissionMode: input.permissionMode,
    model: input.model ?? null,
    stallThresholdMs: input.stallThresholdMs,
    parentId: input.parentId ?? null,
    tenantId: input.tenantId ?? null,
    tokenUsage: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
    pendingPermission: null,
    windowId: null,
    paneId: null,
    hookSecret: newHookSecret(),
    transcriptPath: null,
    endedAt: null,
    endReason: null,
    permissions: null,
    baseCommit: input.baseCommit ?? null,
    managedBy: input.managedBy ?? null,
    offerMcp: input.offerMcp === true,
    hibernatedAt: null,
    hibernateAfterMs: input.hibernateAfterMs ?? null,
  };
}

/** A create request with its template applied: what the service works from. */
export type ResolvedCreateInput = Omit<CreateSessionInput, "workDir" | "templateId"> & { workDir: string };

/**
 * Applies a template under a create request: every field the request gives wins (memoryKeys
 * and env included: env is merged key by key). `autoApprove` becomes bypassPermissions unless a
 * permission mode is given by either.
 */
export function resolveCreateInput(
  request: CreateSessionInput,
  template: SessionDefaults | undefined,
): ResolvedCreateInput {
  const { templateId: _, ...fields } = request;
  const base = template ?? {};
  const workDir = fields.workDir ?? base.workDir;
  if (workDir === undefined) {
    throw new AgError("VALIDATION_ERROR", "invalid body.workDir: required unless a templateId supplies it");
  }
  const permissionMode =
    fields.permissionMode ?? base.permissionMode ?? (base.autoApprove ? "bypassPermissions" : undefined);
  const env = base.env || fields.env ? { ...base.env, ...fields.env } : undefined;
  return dropUndefined({
    name: fields.name,
    workDir,
    prompt: fields.prompt ?? base.prompt,
    memoryKeys: fields.memoryKeys ?? base.memoryKeys,
    permissionMode,
    model: fields.model ?? base.model,
    agent: fields.agent ?? base.agent,
    driver: fields.driver ?? base.driver,
    offerMcp: fields.offerMcp,
    agentCommand: fields.agentCommand ?? base.agentCommand,
    env,
    stallThresholdMs: fields.stallThresholdMs ?? base.stallThresholdMs,
    hibernate: fields.hibernate ?? base.hibernate,
  });
}

/** Optional fields stay absent, not undefined: "not given" matters to reuse matching. */
function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** SPEC rule 3: `[Memory context]`, one `key: value` line per key, a blank line, the prompt. */
export function withMemoryContext(
  prompt: string,
  memories: ReadonlyArray<{ key: string; value: string }>,
): string {
  if (memories.length === 0) return prompt;
  return ["[Memory context]", ...memories.map((m) => `${m.key}: ${m.value}`), "", prompt].join("\n");
}
