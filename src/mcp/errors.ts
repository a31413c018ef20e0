import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { AgError, type ErrorBody, envelope } from "../shared/errors.ts";
import { inMcpTerms } from "./terms.ts";

/**
 * The MCP surface's error translator. A tool failure is a result the agent reads (`isError`), not
 * a protocol error, and it keeps the code so an agent can tell SESSION_BUSY from SESSION_NOT_FOUND.
 * Resources and prompts have no such result: they fail as JSON-RPC errors carrying the same body.
 * Either way the message is in MCP's terms: a route it names is told as the tool to call.
 */

/** MCP's "resource not found" (the JSON-RPC range reserved for implementations). */
export const RESOURCE_NOT_FOUND = -32002;

export function errorBody(error: unknown): ErrorBody {
  // NOT_FOUND is "no route <method> <path>": a route that is not there names no tool.
  if (error instanceof AgError)
    return envelope(error.code, error.code === "NOT_FOUND" ? error.message : inMcpTerms(error.message));
  // Anything else is a bug of ours: its message may hold internals, as on the HTTP surface.
  return envelope("INTERNAL_ERROR", "internal error");
}

/**
 * `CODE: message`, then the `{error, code, statusCode}` envelope as JSON (as a success ends with
 * its body). Not as structuredContent: that is the tool's outputSchema's, and the SDK's client
 * checks an error's structuredContent against it too (typescript-sdk#1943).
 */
export function toolError(error: unknown) {
  const body = errorBody(error);
  return {
    isError: true,
    content: [
      { type: "text" as const, text: `${body.code}: ${body.error}` },
      { type: "text" as const, text: JSON.stringify(body, null, 2) },
    ],
  };
}

/** Checks arguments against a tool's input schema; the message names the field, as REST's does. */
export function checkArguments(schema: TSchema, args: unknown): void {
  const first = Value.Errors(schema, args).First();
  if (!first) return;
  const field = first.path ? `arguments${first.path.replaceAll("/", ".")}` : "arguments";
  throw new AgError("VALIDATION_ERROR", `invalid ${field}: ${first.message}`);
}

/**
 * A JSON-RPC error as the SDK sends it (its `code`, `message` and `data`). Not the SDK's McpError:
 * that one prefixes "MCP error <code>:" to the message, and the client adds the prefix again.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** JSON-RPC's invalid-params and internal-error codes. */
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** Resources and prompts have no error result: the failure is a JSON-RPC error that keeps ag's code. */
export function asProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const body = errorBody(error);
  const code =
    body.statusCode === 404 ? RESOURCE_NOT_FOUND : body.statusCode < 500 ? INVALID_PARAMS : INTERNAL;
  return new ProtocolError(code, `${body.code}: ${body.error}`, body);
}

/** What stands in for a fact that could not be fetched: `(unavailable: CODE: message)`. */
export function describeFailure(error: unknown): string {
  const body = errorBody(error);
  return `(unavailable: ${body.code}: ${body.error})`;
}
