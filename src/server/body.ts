import { AgError } from "../shared/errors.ts";

/**
 * How much of a request body ag reads before it refuses it. Every body is held to these while its
 * bytes arrive, before it becomes objects or meets a validator: a stranger's body (a hook route
 * needs no bearer token) costs at most `bytes` of memory and one linear pass. Without a depth
 * bound a 60 KB body of nested arrays cost 20 s of one core and 2.4 GB when a validation error
 * was printed (issue 28).
 */
export interface BodyLimits {
  /** CONTRACT §2: at most 2 MiB; past it a 413. */
  bytes: number;
  /** Nesting of arrays and objects; past it a 400. */
  depth: number;
  /** Array elements and object members in the whole body, counted as containers + commas; past it a 400. */
  members: number;
}

/**
 * The largest legitimate bodies: a 256 KiB prompt (up to ~1.5 MiB once JSON-escaped) fits the
 * 2 MiB; a batch of 50 sessions, each with 100 env entries and 100 memory keys, is ~11,000
 * members; agents' hook payloads (a tool's input and response) nest a dozen levels at most.
 */
export const DEFAULT_BODY_LIMITS: BodyLimits = { bytes: 2 * 1024 * 1024, depth: 64, members: 100_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Counts nesting and members over raw JSON bytes as they arrive (any chunking), and throws at the
 * first byte past a limit. It does not validate JSON: JSON.parse does that afterwards, on a text
 * already known to be bounded. UTF-8 continuation bytes are ≥ 0x80, so no multi-byte character
 * can be mistaken for a bracket or a quote.
 */
export function createJsonScanner(limits: Pick<BodyLimits, "depth" | "members">) {
  let depth = 0;
  let members = 0;
  let inString = false;
  let escaped = false;
  return {
    feed(bytes: Uint8Array): void {
      const end = bytes.length;
      // Inside strings the next quote and backslash are found natively (most of a large body is
      // string); each is looked up again only once passed, so a chunk costs one pass.
      let quote = -1;
      let backslash = -1;
      let i = 0;
      while (i < end) {
        if (inString) {
          if (escaped) {
            escaped = false;
            i++;
            continue;
          }
          if (quote < i) quote = nextIndex(bytes, QUOTE, i);
          if (backslash < i) backslash = nextIndex(bytes, BACKSLASH, i);
          if (backslash < quote) {
            escaped = true;
            i = backslash + 1;
          } else {
            inString = quote === end;
            i = quote + 1;
          }
          continue;
        }
        switch (bytes[i]) {
          case QUOTE:
            inString = true;
            break;
          case OPEN_ARRAY:
          case OPEN_OBJECT:
            if (++depth > limits.depth) {
              throw new AgError("VALIDATION_ERROR", `request body nests deeper than ${limits.depth} levels`);
            }
            countMember();
            break;
          case CLOSE_ARRAY:
          case CLOSE_OBJECT:
            depth--;
            break;
          case COMMA:
            countMember();
            break;
        }
        i++;
      }
    },
  };

  function countMember(): void {
    if (++members > limits.members) {
      throw new AgError("VALIDATION_ERROR", `request body has more than ${limits.members} members`);
    }
  }
}

/** Where `byte` next occurs from `from`, or the chunk's length when it does not. */
function nextIndex(bytes: Uint8Array, byte: number, from: number): number {
  const at = bytes.indexOf(byte, from);
  return at === -1 ? bytes.length : at;
}

/** `application/json`, `application/merge-patch+json`, … (Elysia passes the type without parameters). */
export function isJsonType(contentType: string): boolean {
  return /^application\/(?:[\w.-]+\+)?json$/i.test(contentType);
}

/**
 * The one body parser of the app (Elysia's onParse): reads the stream itself, whatever its
 * framing, counting bytes (413 past the limit) and, for JSON, scanning depth and members (400),
 * then parses. No framework parser ever sees a body: Elysia's multipart parser would JSON.parse
 * any field starting with `[` or `{`, unbounded. A form (`curl -d a=b`) becomes its fields, as
 * Elysia made it; any other type is handed on as its text (no route takes one: the route's schema
 * refuses it). Returns undefined when there is no body or no content type, as Elysia would.
 */
export async function readBoundedBody(
  request: Request,
  contentType: string,
  limits: BodyLimits,
): Promise<unknown> {
  if (!request.body || request.headers.get("content-length") === "0") return undefined;
  const json = isJsonType(contentType);
  const scanner = json ? createJsonScanner(limits) : null;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.bytes) {
        throw new AgError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${limits.bytes} bytes`);
      }
      scanner?.feed(value);
      chunks.push(value);
    }
  } catch (error) {
    // Stop reading what is refused: the rest of the upload is never buffered.
    await reader.cancel().catch(() => {});
    throw error;
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  if (!contentType) return undefined;
  if (contentType === "application/x-www-form-urlencoded") return formFields(text, limits.members);
  if (!json) return text;
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AgError("VALIDATION_ERROR", "the request body is not valid JSON");
  }
}

/** `a=1&b=2&b=3` → {a: "1", b: ["2", "3"]} (a repeated field is a list, as Elysia's parser made it). */
function formFields(text: string, maxMembers: number): Record<string, string | string[]> {
  // Counted on the text first: URLSearchParams would split the whole body at once.
  let count = 1;
  for (let at = text.indexOf("&"); at !== -1; at = text.indexOf("&", at + 1)) {
    if (++count > maxMembers) {
      throw new AgError("VALIDATION_ERROR", `request body has more than ${maxMembers} members`);
    }
  }
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = fields[key];
    if (seen === undefined) fields[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else fields[key] = [seen, value];
  }
  return fields;
}
