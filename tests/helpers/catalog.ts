import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { AgEvent } from "../../src/events/bus.ts";
import { EVENT_PAYLOADS, type EventName, isEventName } from "../../src/events/names.ts";

/**
 * Every event the apps and runtimes of the tests publish is checked against the event catalog,
 * strictly (no field the catalog does not name): what ag really publishes is what the catalog,
 * the types and docs/events.md say. tests/setup.ts fails the run on any mismatch.
 */
export const offCatalog: string[] = [];

/** The schema with every object closed: a field the catalog does not name is a mismatch. */
export function strict(schema: TSchema): TSchema {
  const closed: TSchema = { ...schema };
  if (schema.type === "object" && schema.properties) {
    closed.additionalProperties = false;
    closed.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, TSchema>).map(([k, v]) => [k, strict(v)]),
    );
  }
  if (schema.type === "array" && schema.items) closed.items = strict(schema.items);
  if (Array.isArray(schema.anyOf)) closed.anyOf = schema.anyOf.map(strict);
  return closed;
}

const STRICT = new Map<EventName, TSchema>();

/** Where `meta` differs from the catalog's payload of `name` (null: it matches). */
export function catalogMismatch(name: string, meta: unknown): string | null {
  if (!isEventName(name)) return `${name}: not in the catalog`;
  let schema = STRICT.get(name);
  if (!schema) {
    schema = strict(EVENT_PAYLOADS[name]);
    STRICT.set(name, schema);
  }
  const error = Value.Errors(schema, meta).First();
  return error ? `${name}: meta${error.path.replaceAll("/", ".")} ${error.message}` : null;
}

export function checkAgainstCatalog(event: AgEvent): void {
  const mismatch = catalogMismatch(event.event, event.meta);
  if (mismatch) offCatalog.push(`${mismatch} in ${JSON.stringify(event.meta).slice(0, 300)}`);
}
