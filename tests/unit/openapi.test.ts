import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { buildOpenApi, deriveOperationId } from "../../src/server/openapi.ts";
import { testApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

test("GET /v1/openapi.json documents the routes from their own schemas", async () => {
  const extra = new Elysia().post("/v1/test/things", ({ body }) => body, {
    body: Type.Object({ label: Type.String({ maxLength: 10 }) }),
    detail: { summary: "Make a thing" },
  });
  const app = testApp({ plugins: [extra], dashboardRoot: tempDir() });
  const response = await app.request("GET", "/v1/openapi.json");
  expect(response.status).toBe(200);
  const doc = await response.json();

  expect(doc.openapi).toBe("3.1.0");
  expect(doc.info.version).toBe("0.0.0-test");
  const health = doc.paths["/v1/health"].get;
  expect(
    health.responses["200"].content["application/json"].schema.properties.tmux.properties.healthy.type,
  ).toBe("boolean");
  expect(health.security).toEqual([]);
  expect(health.operationId).toBe("getHealth");

  const one = doc.paths["/v1/sessions/{id}"].get;
  expect(one.parameters).toContainEqual({
    name: "id",
    in: "path",
    required: true,
    schema: { type: "string" },
  });
  expect(one.security).toEqual([{ bearer: [] }]);
  expect(one.responses.default.content["application/json"].schema.$ref).toBe("#/components/schemas/Error");

  const list = doc.paths["/v1/sessions"].get;
  expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["status", "workDir"]);

  // An optional body is documented as optional; a wildcard route as one `key` parameter.
  expect(doc.paths["/v1/sessions/{id}/approve"].post.requestBody.required).toBe(false);
  expect(doc.paths["/v1/sessions"].post.requestBody.required).toBe(true);
  expect(doc.paths["/v1/memory/{key}"].get.parameters).toContainEqual(
    expect.objectContaining({ name: "key", in: "path", required: true }),
  );

  const made = doc.paths["/v1/test/things"].post;
  expect(made.summary).toBe("Make a thing");
  expect(made.requestBody.content["application/json"].schema.properties.label.maxLength).toBe(10);

  expect(Object.keys(doc.paths).some((p) => p.startsWith("/dashboard"))).toBe(false);
  expect(doc.components.schemas.Error.required.sort()).toEqual(["code", "error", "statusCode"]);
});

test("operationIds come from method and path alone, so they stay the same across builds", () => {
  expect(deriveOperationId("GET", "/v1/sessions/:id/transcript/cursor")).toBe(
    "getSessionsByIdTranscriptCursor",
  );
  expect(deriveOperationId("PUT", "/v1/sessions/:id/permission-profile")).toBe(
    "putSessionsByIdPermissionProfile",
  );
  expect(deriveOperationId("GET", "/v1/memory/*")).toBe("getMemoryByKey");
  expect(deriveOperationId("GET", "/v1/openapi.json")).toBe("getOpenapiJson");

  const route = (method: string, path: string, operationId?: string) => ({
    method,
    path,
    hooks: { detail: { operationId } },
  });
  const doc = buildOpenApi([route("POST", "/v1/sessions/:id/send")], { version: "1" }) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  // SPEC's alias is documented beside its /v1 route, under its own name.
  expect(doc.paths["/sessions/{id}/send"]?.post?.operationId).toBe("postSessionsByIdSendUnversioned");
  expect(() =>
    buildOpenApi([route("GET", "/v1/a"), route("GET", "/v1/b", "getA")], { version: "1" }),
  ).toThrow("operationId getA");
});
