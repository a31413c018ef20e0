import { AgError } from "../shared/errors.ts";

/**
 * Reads a body that came without Content-Length (chunked) while counting, so an endless upload
 * is cut at the limit with a 413 envelope instead of being buffered. Bodies with a length were
 * already checked by the guard and are left to the framework's parser (returns undefined).
 */
export async function parseChunkedBody(
  request: Request,
  contentType: string,
  maxBytes: number,
): Promise<unknown> {
  if (request.headers.has("content-length") || !request.body) return undefined;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new AgError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  if (!contentType.includes("json")) return text;
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AgError("VALIDATION_ERROR", "the request body is not valid JSON");
  }
}
