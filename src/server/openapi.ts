import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { ErrorBody } from "./errors.ts";

/** What the generator needs of a route; Elysia's `app.routes` entries fit it. */
export interface RouteInfo {
  method: string;
  path: string;
  hooks?: {
    body?: unknown;
    query?: unknown;
    params?: unknown;
    response?: unknown;
    detail?: { summary?: string; description?: string; tags?: string[]; hide?: boolean };
  };
}

type JsonObject = Record<string, unknown>;

/**
 * OpenAPI 3.1 from the route table itself: the same TypeBox schemas that validate requests are
 * the documented ones, so the document cannot drift from the server.
 */
export function buildOpenApi(routes: readonly RouteInfo[], info: { version: string }): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const WILDCARD_PARAMETER = {
    name: "key",
    in: "path",
    required: true,
    description: "the rest of the path; may contain /",
    schema: { type: "string" },
  };
  for (const route of routes) {
    const hooks = route.hooks ?? {};
    if (hooks.detail?.hide || !route.path.startsWith("/v1/")) continue;
    // A trailing wildcard (`/v1/memory/*`) is the rest of the path: one parameter that may hold `/`.
    const wildcard = route.path.endsWith("/*");
    const path = route.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{key}");
    const parameters = [
      ...schemaParameters(hooks.params, "path", route.path),
      ...(wildcard ? [WILDCARD_PARAMETER] : []),
      ...schemaParameters(hooks.query, "query", route.path),
    ];
    const operation: JsonObject = {
      summary: hooks.detail?.summary,
      description: hooks.detail?.description,
      tags: hooks.detail?.tags ?? [route.path.split("/")[2]],
      parameters: parameters.length ? parameters : undefined,
      requestBody: isSchema(hooks.body)
        ? {
            required: (hooks.body as unknown as Record<symbol, unknown>)[OptionalKind] !== "Optional",
            content: { "application/json": { schema: plain(hooks.body) } },
          }
        : undefined,
      responses: responses(hooks.response),
    };
    if (!route.path.startsWith("/v1/health")) operation.security = [{ bearer: [] }];
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: { title: "ag", version: info.version, description: "Orchestrates coding-agent CLI sessions." },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: plain(ErrorBody) },
    },
    paths: JSON.parse(JSON.stringify(paths)),
  };
}

function isSchema(value: unknown): value is TSchema {
  return (
    typeof value === "object" && value !== null && ("type" in value || "anyOf" in value || "$ref" in value)
  );
}

/** A TypeBox schema is JSON Schema plus symbols; a JSON round trip keeps only the former. */
function plain(schema: unknown): JsonObject {
  return JSON.parse(JSON.stringify(schema));
}

function schemaParameters(schema: unknown, location: "path" | "query", routePath: string): JsonObject[] {
  if (isSchema(schema) && schema.properties) {
    const required = new Set<string>(schema.required ?? []);
    return Object.entries(schema.properties as Record<string, unknown>).map(([name, property]) => ({
      name,
      in: location,
      required: location === "path" || required.has(name),
      schema: plain(property),
    }));
  }
  if (location === "path") {
    return [...routePath.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
  }
  return [];
}

function responses(response: unknown): JsonObject {
  const out: JsonObject = {};
  const byStatus: Record<string, unknown> = isSchema(response)
    ? { 200: response }
    : ((response as Record<string, unknown>) ?? {});
  for (const [status, schema] of Object.entries(byStatus)) {
    if (!isSchema(schema)) continue;
    out[status] = { description: "OK", content: { "application/json": { schema: plain(schema) } } };
  }
  if (Object.keys(out).length === 0) out[200] = { description: "OK" };
  out.default = {
    description: "Error envelope",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
  return out;
}
