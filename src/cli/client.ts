import type { LoadedConfig } from "../config/load.ts";
import { AgError, ERROR_STATUS, type ErrorCode } from "../shared/errors.ts";
import { readLiveInstance } from "../store/instance.ts";

export interface ApiClient {
  readonly baseUrl: string;
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
  /**
   * A long-lived response body (SSE). Only the wait for the response head is timed; the body
   * runs until the server ends it or `signal` aborts.
   */
  stream(
    path: string,
    options?: { headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<ReadableStream<Uint8Array>>;
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

/**
 * `token`: the bearer token sent with every request; a function is asked at each request (the
 * token file a server writes at its first start: see currentAuthToken).
 */
export function createApiClient(options: {
  baseUrl: string;
  token?: string | (() => string);
  timeoutMs?: number;
}): ApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 10_000;
  const auth = (): Record<string, string> => {
    const token = typeof options.token === "function" ? options.token() : options.token;
    return token ? { authorization: `Bearer ${token}` } : {};
  };
  const unreachable = (error: unknown) =>
    new AgError(
      "SERVER_UNREACHABLE",
      `no ag server answers at ${baseUrl}: ${whyUnreachable(error, timeoutMs)}; start one with \`ag\` (or \`ag run\`)`,
    );
  async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...auth(), ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw unreachable(error);
    }
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (!response.ok) throw toAgError(parsed, response.status);
    return parsed as T;
  }
  async function stream(path: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}) {
    // A timeout signal on the fetch would also cut the body: time the head by hand instead.
    const controller = new AbortController();
    const onAbort = () => controller.abort(init.signal?.reason);
    init.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new DOMException("timed out", "TimeoutError")),
      timeoutMs,
    );
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        headers: { ...auth(), accept: "text/event-stream", ...init.headers },
        signal: controller.signal,
      });
    } catch (error) {
      init.signal?.removeEventListener("abort", onAbort);
      if (init.signal?.aborted) throw error;
      throw unreachable(controller.signal.reason ?? error);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok || !response.body) {
      init.signal?.removeEventListener("abort", onAbort);
      const text = await response.text();
      throw toAgError(text ? safeJson(text) : undefined, response.status);
    }
    return response.body;
  }
  return { baseUrl, get: (path) => send("GET", path), send, stream };
}

/** Why a request found no server, in a person's words. */
export function whyUnreachable(error: unknown, timeoutMs: number): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (name === "TimeoutError") return `it did not answer within ${Math.round(timeoutMs / 1000)} s`;
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return "nothing listens there";
  if (code === "ENOTFOUND") return "that host name is unknown";
  return error instanceof Error ? error.message : String(error);
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
