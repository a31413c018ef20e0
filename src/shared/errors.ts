import { type Static, Type } from "@sinclair/typebox";

/**
 * The one error catalog. A code owns its HTTP status; every surface (HTTP envelope, CLI exit,
 * MCP result) translates an AgError by its code, never by its class or message.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_WORKDIR: 400,
  /** An `agent` ag has no adapter for (GET /v1/agents lists them). */
  UNKNOWN_AGENT: 400,
  /** A `driver` the session's agent cannot be run with. */
  DRIVER_UNSUPPORTED: 400,
  /** Something the session's agent has no equivalent of (a permission mode, fork, resume). */
  UNSUPPORTED_BY_AGENT: 400,
  /** A search query that has no words or an unclosed quote (GET /v1/search). */
  SEARCH_QUERY_INVALID: 400,
  UNAUTHORIZED: 401,
  /** A budget that applies to the session is spent: it is paused until the budget is raised. */
  BUDGET_REACHED: 402,
  FORBIDDEN: 403,
  TENANT_WORKDIR_DENIED: 403,
  /** A session key asked for a permission mode more permissive than its own session's. */
  PERMISSION_MODE_DENIED: 403,
  /** A session key asked for a workDir outside its own session's (as real paths). */
  CREATOR_WORKDIR_DENIED: 403,
  /** A session key's session is nested as deep as sessionKeyMaxDepth allows: it creates no more. */
  SESSION_DEPTH_LIMIT: 403,
  /** A screenshot of a URL that is neither a server of the session nor in the allow list. */
  SCREENSHOT_TARGET_DENIED: 403,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  MEMORY_NOT_FOUND: 404,
  PIPELINE_NOT_FOUND: 404,
  CONSENSUS_NOT_FOUND: 404,
  /** A turn of a session that has no checkpoint (none taken, or pruned by retention). */
  CHECKPOINT_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  FEATURE_DISABLED: 404,
  /** A search hit (`<source>#<message>`) that names no conversation in the index. */
  SEARCH_HIT_NOT_FOUND: 404,
  CONFLICT: 409,
  SESSION_BUSY: 409,
  NO_PENDING_PERMISSION: 409,
  PERMISSION_MISMATCH: 409,
  PROTOCOL_VERSION_UNSUPPORTED: 409,
  /** A terminal-only route (pane, screenshot, keys, attach, spawn) on a headless (ACP) session. */
  NOT_A_TERMINAL_SESSION: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  SESSION_LIMIT_REACHED: 429,
  /** A session already runs sessionKeyMaxChildren sessions it created: one must end first. */
  SESSION_CHILDREN_LIMIT: 429,
  INTERNAL_ERROR: 500,
  SCREENSHOT_UNAVAILABLE: 501,
  TMUX_UNAVAILABLE: 503,
  AGENT_UNAVAILABLE: 503,
  /** One more agent would not fit above the memory reserve (memoryReserveMb); Retry-After says when to try. */
  HOST_MEMORY_LOW: 503,
  /** git could not take or restore a session folder's checkpoint (missing, or it refused). */
  CHECKPOINT_UNAVAILABLE: 503,
  /** The session's host (a fleet member, docs/fleet.md) let its lease expire: its sessions are last known. */
  HOST_OFFLINE: 503,
  /** ag's state store (its SQLite database or state directory) has no space left: nothing was done. */
  STORAGE_FULL: 507,
  /** ag's state store cannot be written (I/O error, read-only, cannot open): nothing was done. */
  STORAGE_UNAVAILABLE: 503,
  /** ag's state database file was removed or replaced while ag runs: writes are refused until restart. */
  STORAGE_REPLACED: 503,
  // Process-level failures: they end a CLI command or stop start-up, and never reach an HTTP client.
  CONFIG_INVALID: 500,
  STATE_DIR_LOCKED: 409,
  STATE_DB_TOO_NEW: 500,
  PORT_IN_USE: 409,
  SERVER_UNREACHABLE: 503,
  USAGE_ERROR: 400,
  /** `ag review`: the review's verdict is not approve (reject, split, failed, or none yet). */
  CONSENSUS_NOT_APPROVED: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AgError extends Error {
  override readonly name = "AgError";

  /** For the `Retry-After` header of a refusal that may pass later. */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions & { retryAfterSeconds?: number },
  ) {
    super(message, options);
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get statusCode(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAgError(value: unknown): value is AgError {
  return value instanceof AgError;
}

/** The message of anything thrown, for logs and one-line CLI errors. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The one error body of every surface: `{error, code, statusCode}` (HTTP, and MCP's text). */
export const ErrorBody = Type.Object({
  error: Type.String(),
  code: Type.String(),
  statusCode: Type.Integer(),
});
export type ErrorBody = Static<typeof ErrorBody>;

/** An answer never echoes what it refuses at length: a message is cut past this many characters. */
export const MAX_MESSAGE_CHARS = 500;

export function envelope(code: ErrorCode, message: string): ErrorBody {
  return { error: clip(message, MAX_MESSAGE_CHARS), code, statusCode: ERROR_STATUS[code] };
}

/** `text` cut to `max` characters, saying how long it was. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}
