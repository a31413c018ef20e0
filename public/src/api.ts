/**
 * The API of the server that serves this page. The token lives in this module's memory only:
 * never in storage, never in a URL (streams and terminals get single-use tokens instead).
 */
let token: string | null = null;

export const setToken = (value: string | null) => {
  token = value;
};
export const hasToken = () => token !== null;

/** The API's error envelope `{error, code, statusCode}`, or what stood in for it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export const isRefused = (error: unknown) => error instanceof ApiError && error.status === 401;
export const isForbidden = (error: unknown) => error instanceof ApiError && error.status === 403;

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = typeof body?.error === "string" ? body.error : `HTTP ${response.status}`;
    throw new ApiError(response.status, body?.code, message);
  }
  return body as T;
}

/** A one-time token for a URL (event stream, terminal), or none when the server needs none. */
export async function urlToken(): Promise<string | null> {
  if (!token) return null;
  return (await api<{ token: string }>("/v1/auth/sse-token", { method: "POST" })).token;
}

/** An error as one line for the page: the server's own words, and its code. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.code ? `${error.message} (${error.code})` : error.message;
  return error instanceof Error ? error.message : String(error);
}
