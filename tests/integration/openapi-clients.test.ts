import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Runtime } from "../../src/runtime.ts";
import {
  fullRuntime,
  type JsonSchema,
  type OpenApiDocument,
  openApiOf,
  operationAt,
  operationsOf,
} from "../helpers/openapi.ts";
import { tempDir } from "../helpers/temp.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BIN = join(ROOT, "node_modules/.bin");
const QUIET = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };

let runtime: Runtime;
let doc: OpenApiDocument;
let dir: string;
let file: string;

beforeAll(async () => {
  runtime = await fullRuntime();
  doc = await openApiOf(runtime);
  dir = tempDir("ag-openapi-");
  file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(doc, null, 2));
});

afterAll(async () => {
  await runtime.drain(100);
  runtime.close();
});

/** Calls `visit` on every object of the document, with its JSON pointer. */
function walkSchemas(node: unknown, at: string, visit: (node: JsonSchema, at: string) => void): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) walkSchemas(item, `${at}/${i}`, visit);
    return;
  }
  if (node === null || typeof node !== "object") return;
  visit(node as JsonSchema, at);
  for (const [key, value] of Object.entries(node)) walkSchemas(value, `${at}/${key}`, visit);
}

function run(argv: string[]) {
  const done = Bun.spawnSync(argv, { cwd: dir, env: QUIET, stdout: "pipe", stderr: "pipe" });
  return { exitCode: done.exitCode, stdout: done.stdout.toString(), stderr: done.stderr.toString() };
}

describe("GET /v1/openapi.json for generated clients", () => {
  test("passes Redocly's recommended rules (redocly.yaml) with no error or warning", () => {
    const lint = run([
      join(BIN, "redocly"),
      "lint",
      file,
      "--config",
      join(ROOT, "redocly.yaml"),
      "--format=json",
    ]);
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf("{"))) as {
      problems: Array<{ ruleId: string; severity: string; message: string; location: unknown }>;
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(lint.exitCode).toBe(0);
  });

  test("names every operation once, documents aliases, /metrics and the event streams", () => {
    const operations = operationsOf(doc);
    const ids = operations.map((o) => o.operation.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationAt(doc, "/v1/sessions/{id}/read", "get").operationId).toBe("getSessionsByIdRead");
    expect(operationAt(doc, "/sessions/{id}/read", "get").operationId).toBe("getSessionsByIdReadUnversioned");
    expect(operationAt(doc, "/sessions/{id}/permission-profile", "put").operationId).toBe(
      "putSessionsByIdPermissionProfileUnversioned",
    );
    expect(Object.keys(operationAt(doc, "/metrics", "get").responses["200"]?.content ?? {})[0]).toStartWith(
      "text/plain",
    );
    for (const stream of ["/v1/events", "/v1/sessions/{id}/events"]) {
      expect(Object.keys(operationAt(doc, stream, "get").responses["200"]?.content ?? {})).toEqual([
        "text/event-stream",
      ]);
    }
    expect(operationAt(doc, "/v1/health", "get").security).toEqual([]);
  });

  test("shared objects are named components with $refs: no inline copy of Session; no string | number for a number", () => {
    const components = (doc.components as { schemas: Record<string, JsonSchema> }).schemas;
    for (const name of ["Error", "Session", "CreatedSession", "PendingPermission", "TokenUsage", "Delivery"])
      expect(Object.keys(components)).toContain(name);
    const text = JSON.stringify(doc);
    // Each is referred to, and every reference resolves.
    for (const name of Object.keys(components)) expect(text).toContain(`"#/components/schemas/${name}"`);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/(\w+)"/g))
      expect(Object.keys(components)).toContain(name!);
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const answer = (path: string, method: string, status = "200") => {
      const content = operationAt(doc, path, method).responses[status]?.content ?? {};
      return (content["application/json"] as { schema: JsonSchema }).schema;
    };
    expect(answer("/v1/sessions/{id}", "get")).toEqual(ref("Session"));
    expect(answer("/v1/sessions", "get")).toEqual({ type: "array", items: ref("Session") });
    expect(answer("/v1/sessions", "post", "201")).toEqual(ref("CreatedSession"));

    const sessionFields = JSON.stringify(Object.keys(components.Session!.properties!).sort());
    const inline: string[] = [];
    const mixed: string[] = [];
    walkSchemas(doc, "", (node, at) => {
      if (node.properties && at !== "/components/schemas/Session") {
        if (JSON.stringify(Object.keys(node.properties).sort()) === sessionFields) inline.push(at);
      }
      const types = (node.anyOf ?? []).flatMap((branch) => [branch.type].flat());
      if (types.includes("string") && (types.includes("number") || types.includes("integer"))) mixed.push(at);
    });
    expect(inline).toEqual([]);
    expect(mixed).toEqual([]);
    const admission = answer("/v1/admission", "get");
    expect(admission.properties!.reserveMb!.type).toBe("integer");
    expect(admission.properties!.availableMb!.anyOf).toEqual([{ type: "integer" }, { type: "null" }]);
    const limit = operationAt(doc, "/v1/audit", "get").parameters!.find((p) => p.name === "limit")!;
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1 });
  });

  test("openapi-typescript makes a client in which a call of every operation type-checks", () => {
    const types = run([join(BIN, "openapi-typescript"), file, "--output", join(dir, "api.ts")]);
    expect(types.stderr).not.toContain("Error");
    expect(types.exitCode).toBe(0);

    const calls = operationsOf(doc).map(({ path, method, operation }, i) => {
      const p = JSON.stringify(path);
      const m = JSON.stringify(method);
      const o = JSON.stringify(operation.operationId);
      return [
        `  const op${i}: operations[${o}] = {} as paths[${p}][${m}];`,
        `  await call(${p}, ${m}, {} as Input<operations[${o}]>);`,
      ].join("\n");
    });
    writeFileSync(
      join(dir, "calls.ts"),
      [
        `import type { operations, paths } from "./api";`,
        `type Input<O> = O extends { parameters: infer P } ? { parameters: P } : { parameters?: never };`,
        `type Answers<O> = O extends { responses: infer R } ? R : never;`,
        `/** What a generated client does: a path and method typed against the document. */`,
        `declare function call<P extends keyof paths, M extends keyof paths[P]>(`,
        `  path: P, method: M, input: Input<paths[P][M]>): Promise<Answers<paths[P][M]>>;`,
        `export async function callEveryOperation(): Promise<void> {`,
        ...calls,
        `}`,
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "bundler",
          skipLibCheck: true,
          types: [],
          noUnusedLocals: false,
        },
        files: ["api.ts", "calls.ts"],
      }),
    );
    const check = run([join(BIN, "tsc"), "-p", join(dir, "tsconfig.json")]);
    expect(check.stdout + check.stderr).toBe("");
    expect(check.exitCode).toBe(0);
  }, 30_000);
});
