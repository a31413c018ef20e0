import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Session, toSession } from "../../src/sessions/index.ts";
import { sampleSession, testApp } from "../helpers/app.ts";

describe("session read routes over the store", () => {
  // Rows inserted by hand have no windows: without supervision nobody marks them crashed.
  const app = testApp({ supervise: false });
  const idle = sampleSession({ status: "idle", workDir: "/repos/alpha" });
  const working = sampleSession({ status: "working", workDir: "/repos/beta" });
  const killed = sampleSession({ status: "killed", workDir: "/repos/alpha-2" });
  const asking = sampleSession({
    status: "permission_prompt",
    pendingPermission: { id: "p1", kind: "tool", tool: "Bash", detail: "ls" },
    tokenUsage: { input: 5, output: 7, cacheRead: 1, cacheCreation: 2 },
  });
  for (const s of [idle, working, killed, asking]) app.repo.insert(s);

  const list = async (query = "") =>
    (await (await app.request("GET", `/v1/sessions${query}`)).json()) as Session[];

  test("lists every session, newest first, each a valid Session", async () => {
    const all = await list();
    expect(all.map((s) => s.id)).toEqual([asking.id, killed.id, working.id, idle.id]);
    for (const s of all) expect(Value.Check(Session, s)).toBe(true);
    expect(all[0]).toEqual(toSession(asking));
  });

  test("filters by status, by running, by workDir substring", async () => {
    expect((await list("?status=idle")).map((s) => s.id)).toEqual([idle.id]);
    expect((await list("?status=running")).map((s) => s.id)).toEqual([asking.id, working.id, idle.id]);
    expect((await list("?workDir=alpha")).map((s) => s.id)).toEqual([killed.id, idle.id]);
    expect((await list("?status=running&workDir=alpha")).map((s) => s.id)).toEqual([idle.id]);
  });

  test("an unknown status filter → 400", async () => {
    const response = await app.request("GET", "/v1/sessions?status=sleeping");
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.error).toBe(
      "invalid query.status: expected one of working, idle, permission_prompt, asking, stalled, killed, completed, crashed, running",
    );
  });

  test("gets one session; an unknown id → 404 SESSION_NOT_FOUND", async () => {
    expect(await (await app.request("GET", `/v1/sessions/${working.id}`)).json()).toEqual(toSession(working));
    const missing = await app.request("GET", "/v1/sessions/nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: "no session nope",
      code: "SESSION_NOT_FOUND",
      statusCode: 404,
    });
  });

  test("no response carries a hook secret or a window id", async () => {
    const text = await (await app.request("GET", "/v1/sessions")).text();
    for (const s of [idle, working, killed, asking]) expect(text).not.toContain(s.hookSecret);
    expect(text).not.toContain("hookSecret");
    expect(text).not.toContain("windowId");
  });

  test("stats count sessions by state", async () => {
    const stats = await (await app.request("GET", "/v1/sessions/stats")).json();
    expect(stats).toMatchObject({ total: 4, active: 3, idle: 1, stalled: 0 });
    expect(stats.byStatus).toMatchObject({
      idle: 1,
      working: 1,
      killed: 1,
      permission_prompt: 1,
      crashed: 0,
    });
  });
});
