import type { KeyStore } from "./keys.ts";
import type { Scope } from "./scopes.ts";

/** What an agent offered ag's MCP server may do: drive sessions, pipelines and shared memory. */
const AGENT_SCOPES: Scope[] = [
  "sessions:read",
  "sessions:write",
  "pipelines:read",
  "pipelines:write",
  "memory:read",
  "memory:write",
  "templates:read",
];

/**
 * API keys of sessions whose agent is offered ag's own MCP server (`ag mcp` over stdio): one key
 * per session, bound to its tenant, made at each launch (the secret is never stored, so a reopened
 * session gets a new one) and deleted when the session ends.
 */
export function createSessionKeys(deps: {
  keys: Pick<KeyStore, "create" | "list" | "delete">;
  /** argv that runs this program again (src/shared/self.ts). */
  selfCommand: readonly string[];
  /** Where this server answers (loopback). */
  baseUrl: () => string;
}) {
  const nameOf = (id: string) => `session ${id} (ag mcp)`;
  function close(id: string): void {
    for (const key of deps.keys.list()) if (key.name === nameOf(id)) deps.keys.delete(key.id);
  }
  return {
    open(rec: { id: string; tenantId: string | null }) {
      close(rec.id);
      const { secret } = deps.keys.create({
        name: nameOf(rec.id),
        scopes: AGENT_SCOPES,
        ...(rec.tenantId ? { tenantId: rec.tenantId } : {}),
      });
      return {
        command: [...deps.selfCommand, "mcp"],
        env: { SVC_BASE_URL: deps.baseUrl(), SVC_AUTH_TOKEN: secret },
      };
    },
    close,
  };
}
