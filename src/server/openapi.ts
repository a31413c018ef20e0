import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { AgentInfo } from "../agents/index.ts";
import { PendingPermission, QuestionOption } from "../agents/vocabulary.ts";
import { Consensus } from "../consensus/consensus.ts";
import { MemoryEntry } from "../memory/entry.ts";
import { Pipeline, Stage } from "../pipelines/pipeline.ts";
import { CreatedSession, Delivery, ForkedSession, Session, TokenUsage } from "../sessions/index.ts";
import { listAliases } from "./aliases.ts";
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
    detail?: {
      summary?: string;
      description?: string;
      tags?: string[];
      hide?: boolean;
      /** Overrides the one derived from method and path (needed only when two would collide). */
      operationId?: string;
      /** Responses the route documents itself: those that are not JSON (SSE, Prometheus text). */
      responses?: Record<string, unknown>;
      /** Overrides the derived requirement (a route that reads a token its own way). */
      security?: Array<Record<string, string[]>>;
    };
  };
}

type JsonObject = Record<string, unknown>;

const ERROR_CONTENT = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };

/**
 * The objects the document names once, under components/schemas, and refers to by `$ref`
 * wherever they appear (a response, a list's items, a field): a generated client gets one type
 * for each. The schemas themselves are the routes' own; any copy of one's shape is that object.
 */
export const NAMED_SCHEMAS: ReadonlyArray<readonly [string, TSchema]> = [
  ["Error", ErrorBody],
  ["Session", Session],
  ["CreatedSession", CreatedSession],
  ["ForkedSession", ForkedSession],
  ["Delivery", Delivery],
  ["PendingPermission", PendingPermission],
  ["QuestionOption", QuestionOption],
  ["TokenUsage", TokenUsage],
  ["Pipeline", Pipeline],
  ["Stage", Stage],
  ["Consensus", Consensus],
  ["MemoryEntry", MemoryEntry],
  ["AgentInfo", AgentInfo],
];
const BEARER = { bearer: [] };
/** Routes whose query takes `token` also accept a single-use SSE token instead of the header. */
export const BEARER_OR_TOKEN = [BEARER, { sseToken: [] }];

/**
 * OpenAPI 3.1 from the route table itself: the same TypeBox schemas that validate requests are
 * the documented ones, so the document cannot drift from the server. SPEC's unversioned aliases
 * are documented as copies of the /v1 operations they are rewritten to.
 */
export function buildOpenApi(
  routes: readonly RouteInfo[],
  info: { version: string },
  named: ReadonlyArray<readonly [string, TSchema]> = NAMED_SCHEMAS,
): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  const operationIds = new Map<string, string>();
  const add = (method: string, path: string, operation: JsonObject) => {
    const id = operation.operationId as string;
    const taken = operationIds.get(id);
    if (taken) throw new Error(`operationId ${id} of ${method} ${path} is already ${taken}'s`);
    operationIds.set(id, `${method} ${path}`);
    paths[path] = { ...paths[path], [method]: operation };
  };
  for (const route of routes) {
    if (route.hooks?.detail?.hide) continue;
    add(route.method.toLowerCase(), openApiPath(route.path), operationOf(route));
  }
  for (const [method, pattern] of listAliases()) {
    const target = paths[openApiPath(`/v1${pattern}`)]?.[method.toLowerCase()];
    if (!target) continue;
    add(method.toLowerCase(), openApiPath(pattern), {
      ...target,
      operationId: `${target.operationId}Unversioned`,
      description: `SPEC's unversioned alias of \`${method} /v1${pattern}\`: the same request, answer and errors.`,
    });
  }
  const names = namedSchemas(named);
  const documented = names.refer(JSON.parse(JSON.stringify(paths)));
  return {
    openapi: "3.1.0",
    info: { title: "ag", version: info.version, description: "Orchestrates coding-agent CLI sessions." },
    servers: [{ url: "/" }],
    // Every operation but GET /v1/health needs a credential when the server has a token.
    security: [BEARER],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        sseToken: {
          type: "apiKey",
          in: "query",
          name: "token",
          description: "a single-use token from POST /v1/auth/sse-token",
        },
      },
      schemas: names.used(documented),
    },
    paths: documented,
  };
}

/** `:id` → `{id}`; a trailing wildcard (`/v1/memory/*`) is the rest of the path: one `key`. */
function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{key}");
}

/**
 * `GET /v1/sessions/{id}/read` → `getSessionsByIdRead`: stable across builds because it depends
 * on nothing but the route, and readable as a generated client's method name.
 */
export function deriveOperationId(method: string, path: string): string {
  const words = openApiPath(path)
    .replace(/^\/v1(?=\/)/, "")
    .split("/")
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return param ? `by-${param[1]}` : segment;
    })
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join("");
}

function operationOf(route: RouteInfo): JsonObject {
  const hooks = route.hooks ?? {};
  const detail = hooks.detail ?? {};
  const wildcard = route.path.endsWith("/*");
  const parameters = [
    ...schemaParameters(hooks.params, "path", route.path),
    ...(wildcard ? [WILDCARD_PARAMETER] : []),
    ...schemaParameters(hooks.query, "query", route.path),
  ];
  const open = route.path.startsWith("/v1/health");
  const takesToken = parameters.some((p) => p.in === "query" && p.name === "token");
  return {
    operationId: detail.operationId ?? deriveOperationId(route.method, route.path),
    summary: detail.summary,
    description: detail.description,
    tags: detail.tags ?? [route.path.split("/")[route.path.startsWith("/v1/") ? 2 : 1]],
    parameters: parameters.length ? parameters : undefined,
    requestBody: isSchema(hooks.body)
      ? {
          required: (hooks.body as unknown as Record<symbol, unknown>)[OptionalKind] !== "Optional",
          content: { "application/json": { schema: plain(hooks.body) } },
        }
      : undefined,
    responses: responses(hooks.response, detail.responses),
    security: detail.security ?? (open ? [] : takesToken ? BEARER_OR_TOKEN : [BEARER]),
  };
}

const WILDCARD_PARAMETER = {
  name: "key",
  in: "path",
  required: true,
  description: "the rest of the path; may contain /",
  schema: { type: "string" },
};

function isSchema(value: unknown): value is TSchema {
  return (
    typeof value === "object" && value !== null && ("type" in value || "anyOf" in value || "$ref" in value)
  );
}

/** A TypeBox schema is JSON Schema plus symbols; a JSON round trip keeps only the former. */
function plain(schema: unknown): JsonObject {
  return exactNumbers(JSON.parse(JSON.stringify(schema)));
}

/**
 * Elysia's `t.Numeric` (a query's number) is a string-or-number union that decodes the string:
 * the document states the number it takes, not `string | number`. Its number branch, with the
 * union's own bounds and default; an integer when it must be a whole number (multipleOf 1).
 */
function exactNumbers<T>(node: T): T {
  if (Array.isArray(node)) return node.map(exactNumbers) as T;
  if (node === null || typeof node !== "object") return node;
  const { anyOf, ...rest } = node as JsonObject;
  const number = Array.isArray(anyOf) ? numericBranch(anyOf as JsonObject[]) : null;
  if (number) {
    const merged: JsonObject = { ...number, ...rest };
    if (merged.type === "number" && merged.multipleOf === 1) {
      merged.type = "integer";
      delete merged.multipleOf;
    }
    return merged as T;
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, exactNumbers(value)])) as T;
}

/** The number of `[string (format numeric|integer), number|integer]`, or null for any other union. */
function numericBranch(anyOf: JsonObject[]): JsonObject | null {
  if (anyOf.length !== 2) return null;
  const [text, number] = anyOf as [JsonObject, JsonObject];
  const decodes = text.type === "string" && (text.format === "numeric" || text.format === "integer");
  return decodes && (number.type === "number" || number.type === "integer") ? number : null;
}

/** A schema's JSON as the document compares shapes: Elysia sets `additionalProperties` in place on a route's response schema. */
function shapeKey(node: unknown): string {
  return JSON.stringify(node, (key, value) => (key === "additionalProperties" ? undefined : value));
}

/** The named schemas as components, and `refer`, which puts a `$ref` wherever one's shape appears. */
function namedSchemas(named: ReadonlyArray<readonly [string, TSchema]>) {
  const bodies = named.map(([name, schema]) => [name, plain(schema)] as const);
  const byShape = new Map(bodies.map(([name, body]) => [shapeKey(body), name]));
  const refer = <T>(node: T, self?: string): T => {
    if (Array.isArray(node)) return node.map((item) => refer(item)) as T;
    if (node === null || typeof node !== "object") return node;
    const name = byShape.get(shapeKey(node));
    if (name !== undefined && name !== self) return { $ref: `#/components/schemas/${name}` } as T;
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, refer(value)])) as T;
  };
  const components = Object.fromEntries(bodies.map(([name, body]) => [name, refer(body, name)]));
  /** The components `paths` refers to, directly or through another (Error always: the envelope). */
  const used = (paths: unknown): Record<string, JsonObject> => {
    const names = new Set(["Error"]);
    const pending = [JSON.stringify(paths)];
    for (let text = pending.pop(); text !== undefined; text = pending.pop()) {
      for (const [, name] of text.matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
        if (names.has(name!) || !components[name!]) continue;
        names.add(name!);
        pending.push(JSON.stringify(components[name!]));
      }
    }
    return Object.fromEntries(Object.entries(components).filter(([name]) => names.has(name)));
  };
  return { refer, used };
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

/** Every operation can answer 4xx (validation, credentials, rate limit) with the error envelope. */
function responses(response: unknown, documented: Record<string, unknown> = {}): JsonObject {
  const out: JsonObject = {};
  const byStatus: Record<string, unknown> = isSchema(response)
    ? { 200: response }
    : ((response as Record<string, unknown>) ?? {});
  for (const [status, schema] of Object.entries(byStatus)) {
    if (!isSchema(schema)) continue;
    out[status] = { description: "OK", content: { "application/json": { schema: plain(schema) } } };
  }
  Object.assign(out, plain(documented));
  if (Object.keys(out).length === 0) out[200] = { description: "OK" };
  out["4XX"] = {
    description:
      "Refused: the error envelope (validation, credentials, scope, not found, conflict, rate limit)",
    content: ERROR_CONTENT,
  };
  out.default = { description: "Error envelope", content: ERROR_CONTENT };
  return out;
}
