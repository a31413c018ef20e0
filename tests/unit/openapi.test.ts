import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { buildOpenApi, deriveOperationId, type RouteInfo } from "../../src/server/openapi.ts";
import { Session } from "../../src/sessions/index.ts";
import { testApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: the document is inspected field by field
type Json = Record<string, any>;

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
  expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["host", "status", "workDir"]);

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

test("shared objects are named components, referred to wherever they appear; numbers are numbers", () => {
  const route = (method: string, path: string, hooks: RouteInfo["hooks"]) => ({ method, path, hooks });
  const doc = buildOpenApi(
    [
      route("GET", "/v1/things", {
        query: t.Object({
          limit: t.Optional(t.Numeric({ minimum: 1, maximum: 9, multipleOf: 1, default: 5 })),
        }),
        response: Type.Array(Session),
      }),
      route("GET", "/v1/things/:id", {
        // A copy of Session's shape (as a spread or an Optional makes one) is Session too.
        response: Type.Object({ one: Type.Optional(Session), ratio: t.Numeric() }),
      }),
    ],
    { version: "1" },
  ) as Json;
  const list = doc.paths["/v1/things"].get;
  expect(list.parameters[0].schema).toEqual({ type: "integer", minimum: 1, maximum: 9, default: 5 });
  expect(list.responses["200"].content["application/json"].schema).toEqual({
    type: "array",
    items: { $ref: "#/components/schemas/Session" },
  });
  const one = doc.paths["/v1/things/{id}"].get.responses["200"].content["application/json"].schema;
  expect(one.properties.one).toEqual({ $ref: "#/components/schemas/Session" });
  expect(one.properties.ratio).toEqual({ type: "number" });
  // Only what the paths refer to is listed, and what that refers to in turn (Session's fields).
  expect(Object.keys(doc.components.schemas).sort()).toEqual(
    ["Error", "PendingPermission", "QuestionOption", "Session", "TokenUsage"].sort(),
  );
  expect(doc.components.schemas.Session.properties.pendingPermission.anyOf).toContainEqual({
    $ref: "#/components/schemas/PendingPermission",
  });
});
