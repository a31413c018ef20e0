/**
 * Reading the agents' own JSON (transcript lines, session files, hook payloads), whose fields are
 * checked where read: a field of the wrong type reads as absent, never as a throw.
 */

export type Json = Record<string, unknown>;

/** One line of JSON, or undefined when it is not JSON (a torn last line, another format). */
export function parseJsonLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A string field, or null. */
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** A count: a finite number, else 0. */
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * The counts an object holds (each read as num()), under the names given: a list of names, or
 * ag's name → the field's name. Null when `value` is not an object.
 */
export function countsOf<K extends string>(
  value: unknown,
  fields: readonly K[] | Record<K, string>,
): Record<K, number> | null {
  if (!isObject(value)) return null;
  const pairs: [K, string][] = Array.isArray(fields)
    ? fields.map((name) => [name, name])
    : (Object.entries(fields) as [K, string][]);
  return Object.fromEntries(pairs.map(([name, field]) => [name, num(value[field])])) as Record<K, number>;
}
