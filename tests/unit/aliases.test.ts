import { describe, expect, test } from "bun:test";
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

  test("every alias answers exactly what its /v1 route answers", async () => {
    const app = testApp();
    const id = "0b5e55ed-0000-4000-8000-00000000dead";
    const cases: Array<[string, string, unknown]> = [
      ["POST", "/sessions", { workDir: "relative/dir" }],
      ["GET", `/sessions/${id}/read`, undefined],
      ["POST", `/sessions/${id}/send`, { text: "hi" }],
      ["POST", `/sessions/${id}/interrupt`, undefined],
      ["DELETE", `/sessions/${id}`, undefined],
      ["POST", `/sessions/${id}/spawn`, { prompt: "x" }],
      ["POST", `/sessions/${id}/fork`, undefined],
      ["PUT", `/sessions/${id}/permissions`, { allowRead: true, allowWrite: false, allowBash: false }],
      ["PUT", `/sessions/${id}/permission-profile`, { profile: "readonly" }],
    ];
    for (const [method, path, body] of cases) {
      const viaAlias = await app.request(method, path, { body });
      const viaV1 = await app.request(method, `/v1${path}`, { body });
      expect({ path, status: viaAlias.status, body: await viaAlias.json() }).toEqual({
        path,
        status: viaV1.status,
        body: await viaV1.json(),
      });
    }
    const created = await app.request("POST", "/sessions", { body: { workDir: "relative/dir" } });
    expect((await created.json()).code).toBe("INVALID_WORKDIR");
  });

  test("a path that is not an alias stays unknown", async () => {
    const response = await testApp().request("GET", "/sessions");
    expect(response.status).toBe(404);
  });
});
