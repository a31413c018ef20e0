import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { aliasTarget, listAliases } from "../../src/server/aliases.ts";
import { testApp } from "../helpers/app.ts";

describe("SPEC's unversioned aliases", () => {
  test("each maps to its /v1 route", () => {
    const id = "0b5e55ed-0000-4000-8000-000000000001";
    expect(aliasTarget("POST", "/sessions")).toBe("/v1/sessions");
    expect(aliasTarget("GET", `/sessions/${id}/read`)).toBe(`/v1/sessions/${id}/read`);
    expect(aliasTarget("POST", `/sessions/${id}/send`)).toBe(`/v1/sessions/${id}/send`);
    expect(aliasTarget("POST", `/sessions/${id}/interrupt`)).toBe(`/v1/sessions/${id}/interrupt`);
    expect(aliasTarget("DELETE", `/sessions/${id}`)).toBe(`/v1/sessions/${id}`);
    expect(aliasTarget("POST", `/sessions/${id}/spawn`)).toBe(`/v1/sessions/${id}/spawn`);
    expect(aliasTarget("POST", `/sessions/${id}/fork`)).toBe(`/v1/sessions/${id}/fork`);
    expect(aliasTarget("PUT", `/sessions/${id}/permissions`)).toBe(`/v1/sessions/${id}/permissions`);
    expect(aliasTarget("PUT", `/sessions/${id}/permission-profile`)).toBe(
      `/v1/sessions/${id}/permission-profile`,
    );
    expect(listAliases()).toHaveLength(9);
  });

  test("only the listed method and shape are aliases", () => {
    expect(aliasTarget("GET", "/sessions")).toBeNull();
    expect(aliasTarget("GET", "/sessions/abc")).toBeNull();
    expect(aliasTarget("POST", "/sessions/abc/approve")).toBeNull();
    expect(aliasTarget("POST", "/sessions//send")).toBeNull();
    expect(aliasTarget("GET", "/sessions/abc/read/more")).toBeNull();
    expect(aliasTarget("POST", "/v1/sessions")).toBeNull();
  });

  test("an alias reaches the /v1 handler with its method, body and query intact", async () => {
    const routes = new Elysia()
      .post("/v1/sessions", ({ body, query }) => ({ via: "v1", body, query }), {
        body: Type.Object({ workDir: Type.String() }),
      })
      .post("/v1/sessions/:id/send", ({ params, body }) => ({ id: params.id, body }));
    const app = testApp({ plugins: [routes] });
    const created = await app.request("POST", "/sessions?x=1", { body: { workDir: "/tmp" } });
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({ via: "v1", body: { workDir: "/tmp" }, query: { x: "1" } });
    const sent = await app.request("POST", "/sessions/s1/send", { body: { text: "hi" } });
    expect(await sent.json()).toEqual({ id: "s1", body: { text: "hi" } });
  });

  test("an alias is validated like its /v1 route", async () => {
    const routes = new Elysia().post("/v1/sessions", ({ body }) => body, {
      body: Type.Object({ workDir: Type.String() }),
    });
    const response = await testApp({ plugins: [routes] }).request("POST", "/sessions", { body: {} });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("VALIDATION_ERROR");
  });

  test("a path that is not an alias stays unknown", async () => {
    const response = await testApp().request("GET", "/sessions");
    expect(response.status).toBe(404);
  });
});
