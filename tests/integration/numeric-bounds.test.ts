import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import {
  fullRuntime,
  type JsonSchema,
  type OpenApiDocument,
  openApiOf,
  operationsOf,
} from "../helpers/openapi.ts";
import type { TestRuntime } from "../helpers/runtime.ts";

/**
 * Numbers that break bounds, written as they go on the wire (1e309 is Infinity once parsed,
 * 999999999999999999999 is past every integer SQLite holds).
 */
const BAD_NUMBERS = [
  "-1",
  "0",
  "-0",
  "0.5",
  "1.5",
  "999999999999999999999",
  "9007199254740993",
  "1e309",
  "-1e309",
  "1e-7",
];
const BAD_STRINGS = ["abc", "", "NaN", "Infinity", "0x10", "1,5", " 1"];

let runtime: TestRuntime;
let doc: OpenApiDocument;

beforeAll(async () => {
  runtime = await fullRuntime();
  doc = await openApiOf(runtime);
});

afterAll(async () => {
  await runtime.drain(100);
  runtime.close();
});

function isNumeric(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  const types = [schema.type].flat();
  return (
    types.includes("number") || types.includes("integer") || (schema.anyOf ?? []).some((s) => isNumeric(s))
  );
}

/** The number branch of a schema (TypeBox's t.Numeric is string-or-number). */
function numberBranch(schema: JsonSchema): JsonSchema {
  const types = [schema.type].flat();
  if (types.includes("number") || types.includes("integer")) return schema;
  return (schema.anyOf ?? []).find((s) => isNumeric(s)) as JsonSchema;
}

/** Paths (property names) to every numeric field of a body, through nested objects. */
function numericFields(schema: JsonSchema | undefined, at: string[] = []): string[][] {
  if (!schema?.properties) return [];
  return Object.entries(schema.properties).flatMap(([name, property]) =>
    isNumeric(property) ? [[...at, name]] : numericFields(property, [...at, name]),
  );
}

/** The smallest value the schema accepts, as far as this test can tell: required fields only. */
function sample(schema: JsonSchema): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf?.[0]) return sample(schema.anyOf[0]);
  const type = [schema.type].flat()[0];
  if (type === "object") {
    const required = new Set(schema.required ?? []);
    return Object.fromEntries(
      Object.entries(schema.properties ?? {})
        .filter(([name]) => required.has(name))
        .map(([name, property]) => [name, sample(property)]),
    );
  }
  if (type === "array") return schema.minItems && schema.items ? [sample(schema.items)] : [];
  if (type === "string") return "x".repeat(Math.max(1, schema.minLength ?? 1));
  if (type === "integer" || type === "number") return schema.minimum ?? 1;
  if (type === "boolean") return false;
  return null;
}

/** A JSON body with `raw` (JSON text, so 1e309 stays as sent) at `field`. */
function bodyWith(base: unknown, field: string[], raw: string): string {
  const marker = "\u0000bad\u0000";
  const copy = structuredClone(base) as Record<string, unknown>;
  let target = copy;
  for (const name of field.slice(0, -1)) {
    target[name] = (target[name] as Record<string, unknown>) ?? {};
    target = target[name] as Record<string, unknown>;
  }
  target[field[field.length - 1] as string] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), raw);
}

function outOfBounds(value: string, schema: JsonSchema): boolean {
  if (!BAD_NUMBERS.includes(value)) return false;
  const n = Number(value);
  return (
    !Number.isSafeInteger(n) ||
    n < (schema.minimum ?? Number.NEGATIVE_INFINITY) ||
    n > (schema.maximum ?? Number.POSITIVE_INFINITY)
  );
}

function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name) => (name === "key" ? "bounds/key" : crypto.randomUUID()));
}

type Send = (method: string, path: string, body?: string) => Promise<number>;

/** In process, through the app's own handler. */
const sendInProcess: Send = async (method, path, body) => {
  const response = await runtime.app.handle(
    new Request(`${runtime.url}${path}`, {
      method: method.toUpperCase(),
      body,
      // As the CLI sends it: with the token ag generated (state changes without an Origin need it).
      headers: {
        authorization: `Bearer ${runtime.token()}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
    }),
  );
  await response.body?.cancel(); // an event stream stays open otherwise
  return response.status;
};

/** Every numeric field of every route, sent values its schema rules out. */
async function sweep(send: Send): Promise<{ failures: string[]; sent: number }> {
  const failures: string[] = [];
  let sent = 0;
  for (const { path, method, operation } of operationsOf(doc)) {
    const query = (operation.parameters ?? []).filter((p) => p.in === "query" && isNumeric(p.schema));
    for (const parameter of query) {
      for (const value of [...BAD_NUMBERS, ...BAD_STRINGS]) {
        const url = `${concrete(path)}?${parameter.name}=${encodeURIComponent(value)}`;
        const status = await send(method, url);
        sent++;
        if (status >= 500) failures.push(`${method} ${url} → ${status}`);
        // A number its own schema rules out is a validation error, whatever the route.
        if (outOfBounds(value, numberBranch(parameter.schema)) && status !== 400) {
          failures.push(`${method} ${url} → ${status}, not 400`);
        }
      }
    }
    const schema = operation.requestBody?.content["application/json"]?.schema;
    for (const field of numericFields(schema)) {
      const base = sample(schema as JsonSchema);
      const raws = [...BAD_NUMBERS, ...BAD_STRINGS.map((s) => JSON.stringify(s)), "null", "true", "[]", "{}"];
      for (const raw of raws) {
        const target = concrete(path);
        const status = await send(method, target, bodyWith(base, field, raw));
        sent++;
        if (status >= 500) failures.push(`${method} ${target} ${field.join(".")}=${raw} → ${status}`);
      }
    }
  }
  return { failures, sent };
}

describe("numeric query and body fields", () => {
  test("every one is an integer with a minimum and a maximum in its schema", () => {
    const unbounded: string[] = [];
    for (const { path, method, operation } of operationsOf(doc)) {
      const fields = [
        ...(operation.parameters ?? [])
          .filter((p) => isNumeric(p.schema))
          .map((p) => ({ name: `${p.in} ${p.name}`, schema: numberBranch(p.schema) })),
        ...numericFields(operation.requestBody?.content["application/json"]?.schema).map((field) => ({
          name: `body ${field.join(".")}`,
          schema: field.reduce<JsonSchema>(
            (s, name) => s.properties?.[name] as JsonSchema,
            operation.requestBody?.content["application/json"]?.schema as JsonSchema,
          ),
        })),
      ];
      for (const { name, schema } of fields) {
        const number = numberBranch(schema);
        if (number.minimum === undefined || number.maximum === undefined) {
          unbounded.push(`${method} ${path} ${name}: no minimum or maximum`);
        }
        // Every number in this API counts something; a fractional one would be named here. Money is
        // the one exception: a budget in US dollars (`usd`, docs/budgets.md), bounded like the rest.
        const money = name.endsWith("usd");
        if (number.type !== "integer" && number.multipleOf !== 1 && !money) {
          unbounded.push(`${method} ${path} ${name}: not an integer`);
        }
      }
    }
    expect(unbounded).toEqual([]);
  });

  test("no bounds-breaking value gets a 500 from any route", async () => {
    const { failures, sent } = await sweep(sendInProcess);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(100);
  }, 30_000);

  // The shipped program, not only the source: a minifier that mangled names once let every
  // out-of-bounds query number through Elysia's validators unchecked (as a string) — 500s and
  // unbounded pages in the binary while this file passed in process.
  test("the compiled binary holds the same bounds", async () => {
    const server = await startAg(await compiledBinary(), [], {
      env: agEnv({ SVC_PORT: "0", SVC_HOST: "127.0.0.1" }),
    });
    try {
      const { failures, sent } = await sweep(async (method, path, body) => {
        const response = await fetch(`${server.url}${path}`, {
          method: method.toUpperCase(),
          body,
          headers: {
            authorization: `Bearer ${server.token()}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          signal: AbortSignal.timeout(5_000),
        });
        await response.body?.cancel();
        return response.status;
      });
      expect(failures).toEqual([]);
      expect(sent).toBeGreaterThan(100);
    } finally {
      await server.stop();
    }
  }, 90_000);
});
