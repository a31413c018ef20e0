/**
 * What an event may carry of an agent's message: bounded, so the event ring, SSE buffers and
 * channel queues hold bounded events (the transcript keeps it all).
 */

export const clip = (text: string, max = 2000) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A tool's input as an event carries it: every string clipped (a write holds a whole file). */
export function clipStrings(value: unknown): unknown {
  if (typeof value === "string") return clip(value);
  if (Array.isArray(value)) return value.slice(0, 100).map(clipStrings);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clipStrings(v)]));
}
