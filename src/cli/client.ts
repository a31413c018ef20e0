import type { LoadedConfig } from "../config/load.ts";
import { AgError, ERROR_STATUS, type ErrorCode } from "../shared/errors.ts";
import { readLiveInstance } from "../store/instance.ts";

export interface ApiClient {
  readonly baseUrl: string;
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/**
 * Which server a CLI command talks to: --port, else an explicitly configured SVC_BASE_URL, else
 * the live server recorded in the state directory (it may sit on a random port), else the
 * configured default.
 */
export function resolveServerUrl(loaded: LoadedConfig, portFlag?: number): string {
  if (portFlag !== undefined) return `http://127.0.0.1:${portFlag}`;
  if (loaded.sources.baseUrl !== "default") return loaded.config.baseUrl;
  return readLiveInstance(loaded.config.stateDir)?.baseUrl ?? loaded.config.baseUrl;
}

export function createApiClient(options: { baseUrl: string; token?: string; timeoutMs?: number }): ApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch (error) {
      const why = error instanceof Error && error.name === "TimeoutError" ? "timed out" : "is not reachable";
      throw new AgError(
        "SERVER_UNREACHABLE",
        `no ag server answers at ${baseUrl} (${why}); start one with \`ag\``,
      );
    }
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (!response.ok) throw toAgError(parsed, response.status);
    return parsed as T;
  }
  return { baseUrl, get: (path) => send("GET", path), send };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A server's error envelope, back into the error it was. */
function toAgError(body: unknown, status: number): AgError {
  const envelope = body as { error?: unknown; code?: unknown } | undefined;
  const code =
    typeof envelope?.code === "string" && envelope.code in ERROR_STATUS ? (envelope.code as ErrorCode) : null;
  const message = typeof envelope?.error === "string" ? envelope.error : `the server answered HTTP ${status}`;
  return new AgError(code ?? "INTERNAL_ERROR", message);
}
