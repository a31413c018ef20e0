import { type Static, Type } from "@sinclair/typebox";
import { AgError, ERROR_STATUS, type ErrorCode } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";

export const ErrorBody = Type.Object({
  error: Type.String(),
  code: Type.String(),
  statusCode: Type.Integer(),
});
export type ErrorBody = Static<typeof ErrorBody>;

export function envelope(code: ErrorCode, message: string): ErrorBody {
  return { error: message, code, statusCode: ERROR_STATUS[code] };
}

interface ElysiaValidationError {
  type: string;
  valueError?: { path: string; message: string; schema?: { anyOf?: Array<{ const?: unknown }> } };
}

/**
 * Turns anything thrown while handling a request into the `{error, code, statusCode}` envelope.
 * `frameworkCode` is Elysia's classification; an unexpected error becomes a 500 that names no
 * internals (the details go to the log).
 */
export function toErrorBody(
  error: unknown,
  frameworkCode: string | number,
  request: Request,
  logger?: Logger,
): ErrorBody {
  if (error instanceof AgError) return envelope(error.code, error.message);
  // Elysia wraps whatever a body parser throws (our 413 among it) in its own ParseError.
  const cause = (error as Error | undefined)?.cause;
  if (cause instanceof AgError) return envelope(cause.code, cause.message);
  switch (frameworkCode) {
    case "VALIDATION":
      // A response that does not fit its own schema is our bug, not the client's.
      if ((error as ElysiaValidationError).type === "response") break;
      return envelope("VALIDATION_ERROR", describeValidation(error as ElysiaValidationError));
    case "PARSE":
      return envelope("VALIDATION_ERROR", "the request body is not valid JSON");
    case "NOT_FOUND":
      return envelope("NOT_FOUND", `no route ${request.method} ${new URL(request.url).pathname}`);
    case "INVALID_COOKIE_SIGNATURE":
    case "INVALID_FILE_TYPE":
      return envelope("VALIDATION_ERROR", (error as Error).message);
  }
  logger?.error(`unhandled error in ${request.method} ${new URL(request.url).pathname}`, error);
  return envelope("INTERNAL_ERROR", "internal error");
}

function describeValidation(error: ElysiaValidationError): string {
  const part = error.type === "params" ? "path" : error.type;
  const detail = error.valueError;
  if (!detail) return `invalid ${part}`;
  const field = detail.path ? `${part}${detail.path.replaceAll("/", ".")}` : part;
  const choices = detail.schema?.anyOf?.map((s) => s.const).filter((c) => typeof c === "string");
  if (choices?.length && choices.length === detail.schema?.anyOf?.length) {
    return `invalid ${field}: expected one of ${choices.join(", ")}`;
  }
  return `invalid ${field}: ${detail.message}`;
}
