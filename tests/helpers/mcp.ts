import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/** SPEC's two MCP resources and two resource templates. */
export const SPEC_RESOURCES = {
  uris: ["svc://health", "svc://sessions"],
  templates: ["svc://sessions/{id}/pane", "svc://sessions/{id}/transcript"],
};

/** The resources and resource templates an MCP server lists, sorted, in SPEC_RESOURCES' shape. */
export async function listedResources(client: Client): Promise<typeof SPEC_RESOURCES> {
  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  return {
    uris: resources.map((r) => r.uri).sort(),
    templates: resourceTemplates.map((r) => r.uriTemplate).sort(),
  };
}

/** The `{error, code, statusCode}` envelope of an isError tool result (its last text block). */
export function errorOf(result: { isError?: unknown; content?: unknown; structuredContent?: unknown }): {
  error: string;
  code: string;
  statusCode: number;
} {
  if (result.isError !== true) throw new Error(`not an error result: ${JSON.stringify(result)}`);
  // A failure has no structuredContent: that is the outputSchema's, for successes only.
  if (result.structuredContent !== undefined) throw new Error("an error result carries structuredContent");
  const blocks = result.content as Array<{ type: string; text: string }>;
  return JSON.parse(blocks.at(-1)!.text);
}

/**
 * Why `value` does not fit a TypeBox schema (empty when it does), with the formats ag's schemas
 * use registered as the SDK client's ajv knows them.
 */
export function misfits(schema: TSchema, value: unknown): string[] {
  for (const [name, check] of FORMATS) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check);
  return [...Value.Errors(schema, value)].map((e) => `${e.path || "/"}: ${e.message}`);
}

const FORMATS: Array<[string, (value: string) => boolean]> = [
  ["date-time", (value) => !Number.isNaN(Date.parse(value)) && /^\d{4}-\d\d-\d\dT/.test(value)],
  ["uuid", (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)],
];
