import type { Runtime } from "../../src/runtime.ts";
import { startTestRuntime, type TestRuntime } from "./runtime.ts";

export interface OpenApiOperation {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: JsonSchema }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  format?: string;
  [keyword: string]: unknown;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  [key: string]: unknown;
}

/** The whole server's route table (every plugin the runtime mounts), so the whole document. */
export async function fullRuntime(env: Record<string, string> = {}): Promise<TestRuntime> {
  return startTestRuntime({ SVC_RATE_LIMIT_PER_MIN: "0", ...env });
}

export async function openApiOf(runtime: Runtime): Promise<OpenApiDocument> {
  const response = await runtime.app.handle(new Request(`${runtime.url}/v1/openapi.json`));
  if (response.status !== 200) throw new Error(`openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

/** Every operation with its method and path, in document order. */
export function operationsOf(doc: OpenApiDocument) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  );
}

/** One operation, or a failure naming what is missing. */
export function operationAt(doc: OpenApiDocument, path: string, method: string): OpenApiOperation {
  const operation = doc.paths[path]?.[method];
  if (!operation) throw new Error(`no ${method} ${path} in the document`);
  return operation;
}
