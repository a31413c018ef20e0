import { RequestError } from "@agentclientprotocol/sdk";
import { AgError } from "../shared/errors.ts";

/** ACP's "resource not found" (the SDK names it for sessions only). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * The ACP surface's one translator: an ag error becomes a JSON-RPC error whose message is ag's
 * and whose `data` keeps ag's code and HTTP status ({code, statusCode}, the envelope's fields).
 */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (!(error instanceof AgError)) {
    const message = error instanceof Error ? error.message : String(error);
    return new RequestError(-32603, message, { code: "INTERNAL_ERROR", statusCode: 500 });
  }
  const data = { code: error.code, statusCode: error.statusCode };
  if (error.statusCode === 404) return new RequestError(RESOURCE_NOT_FOUND, error.message, data);
  if (error.statusCode === 400 || error.statusCode === 422)
    return new RequestError(-32602, error.message, data);
  // A request the session's state refuses (busy, running, answered): JSON-RPC's invalid request.
  if (error.statusCode === 409) return new RequestError(-32600, error.message, data);
  return new RequestError(-32603, error.message, data);
}

/** Runs an ACP handler: whatever it throws reaches the client translated. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toRequestError(error);
  }
}
