import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KeyStore } from "./keys.ts";
import type { Scope } from "./scopes.ts";

/**
 * What an agent offered ag's MCP server may do: drive its own sessions and shared memory. Not
 * pipelines: a pipeline is server-wide (its stages are ag's own sessions, made for no owner), so it
 * would be a way around the bounds a session key's sessions keep (docs/auth.md, "Session keys").
 */
export const AGENT_SCOPES: Scope[] = [
  "sessions:read",
  "sessions:write",
  "memory:read",
  "memory:write",
  "templates:read",
];

/**
 * API keys of sessions whose agent is offered ag's own MCP server (`ag mcp` over stdio): one key
 * per session, bound to its session and tenant, made at each launch (the secret is never stored,
 * so a reopened session gets a new one) and deleted when the session ends. Bound to its session,
 * a key reaches only that session and the sessions made with it (src/sessions/lineage.ts).
 *
 * The key travels in a file of the session's private folder (0600, in a 0700 folder), named by
 * `ag mcp --config <file>`: never on a command line, where any local user's `ps` reads it — an
 * MCP server entry's `env` is no safer, as an adapter may pass its servers to the agent CLI in
 * argv (Claude Code's `--mcp-config <json>`).
 */
export function createSessionKeys(deps: {
  keys: Pick<KeyStore, "create" | "list" | "delete">;
  /** argv that runs this program again (src/shared/self.ts). */
  selfCommand: readonly string[];
  /** Where this server answers (loopback). */
  baseUrl: () => string;
}) {
  const nameOf = (id: string) => `session ${id} (ag mcp)`;
  const files = new Map<string, string>();
  function close(id: string): void {
    for (const key of deps.keys.list()) if (key.sessionId === id) deps.keys.delete(key.id);
    const file = files.get(id);
    files.delete(id);
    if (file) rmSync(file, { force: true });
  }
  return {
    /** `dir`: the session's private folder (created if missing). */
    open(rec: { id: string; tenantId: string | null }, dir: string) {
      close(rec.id);
      const { secret } = deps.keys.create({
        name: nameOf(rec.id),
        scopes: AGENT_SCOPES,
        sessionId: rec.id,
        ...(rec.tenantId ? { tenantId: rec.tenantId } : {}),
      });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, "mcp-config.json");
      rmSync(file, { force: true });
      // Created 0600 before the secret is in it (mode applies at creation only).
      writeFileSync(file, JSON.stringify({ baseUrl: deps.baseUrl(), authToken: secret }), {
        mode: 0o600,
        flag: "wx",
      });
      files.set(rec.id, file);
      return { command: [...deps.selfCommand, "mcp", "--config", file], env: {} };
    },
    close,
  };
}
