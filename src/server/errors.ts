import { AgError, clip, type ErrorBody, type ErrorCode, envelope } from "../shared/errors.ts";
import { storageFault } from "../store/faults.ts";

export { ErrorBody, envelope, MAX_MESSAGE_CHARS } from "../shared/errors.ts";

/** The envelope as a whole response, for answers given before the framework sees the request. */
export function jsonEnvelope(code: ErrorCode, message: string): Response {
  const body = envelope(code, message);
  return Response.json(body, {
    status: body.statusCode,
    headers: { "x-content-type-options": "nosniff", "cache-control": "no-store" },
  });
}

interface ElysiaValidationError {
  type: string;
  valueError?: { path: string; message: string; schema?: { anyOf?: Array<{ const?: unknown }> } };
}

/**
 * Turns anything thrown while handling a request into the `{error, code, statusCode}` envelope.
 * `frameworkCode` is Elysia's classification; a storage fault (disk full, I/O error) is its own
 * 507/503 code; any other unexpected error becomes a 500 that names no internals (the details go to
 * the log).
 */
export function toErrorBody(
  error: unknown,
  frameworkCode: string | number,
  request: Request,
  log?: (line: string, error: unknown) => void,
): ErrorBody {
  if (error instanceof AgError) return envelope(error.code, error.message);
  // Elysia wraps whatever a body parser throws (our 413 among it) in its own ParseError.
  const cause = (error as Error | undefined)?.cause;
  if (cause instanceof AgError) return envelope(cause.code, cause.message);
  // A write the disk did not take (SQLite's or the file system's code): 507/503 naming it, never a 500.
  const fault = storageFault(error);
  if (fault) return envelope(fault.code, fault.message);
  switch (frameworkCode) {
    case "VALIDATION":
      // A response that does not fit its own schema is our bug, not the client's.
      if ((error as ElysiaValidationError).type === "response") break;
      return envelope("VALIDATION_ERROR", describeValidation(error as ElysiaValidationError));
    case "PARSE":
      return envelope("VALIDATION_ERROR", "the request body is not valid JSON");
    case "NOT_FOUND":
      return envelope("NOT_FOUND", `no route ${request.method} ${clip(new URL(request.url).pathname, 200)}`);
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return envelope("VALIDATION_ERROR", (error as Error).message);
  }
  log?.(`unhandled error in ${request.method} ${new URL(request.url).pathname}`, error);
  return envelope("INTERNAL_ERROR", "internal error");
}

function describeValidation(error: ElysiaValidationError): string {
  const part = error.type === "params" ? "path" : error.type;
  const detail = error.valueError;
  if (!detail) return `invalid ${part}`;
  const field = detail.path ? `${part}${detail.path.replaceAll("/", ".")}` : part;
  const choices = detail.schema?.anyOf?.map((s) => s.const).filter((c) => typeof c === "string");
  if (choices?.length && choices.length === detail.schema?.anyOf?.length) {
    return `invalid ${clip(field, MAX_FIELD_CHARS)}: expected one of ${choices.join(", ")}`;
  }
  return `invalid ${clip(field, MAX_FIELD_CHARS)}: ${detail.message}`;
}

/** A field's path holds the client's own keys (an `env` name): named, never echoed at length. */
const MAX_FIELD_CHARS = 120;
