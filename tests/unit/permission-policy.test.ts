import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers/app.ts";
import { hook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

async function session() {
  const app = testApp();
  simulateAgents(app);
  const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
  return { app, id: (await created.json()).id as string };
}

const preToolUse = (tool: string, input: Record<string, unknown>) => ({ tool_name: tool, tool_input: input });

describe("permission policies, enforced in the agent's pre-tool hook", () => {
  test("readonly: Bash and Write are refused before any prompt; Read is left to the agent", async () => {
    const { app, id } = await session();
    const set = await app.request("PUT", `/v1/sessions/${id}/permission-profile`, {
      body: { profile: "readonly" },
    });
    expect(await set.json()).toEqual({
      profile: "readonly",
      allowRead: true,
      allowWrite: false,
      allowBash: false,
    });
    const bash = await (
      await hook(app, id, "PreToolUse", preToolUse("Bash", { command: "rm -rf x" }))
    ).json();
    expect(bash.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(bash.hookSpecificOutput.permissionDecisionReason).toContain("readonly");
    const write = await (await hook(app, id, "PreToolUse", preToolUse("Write", { file_path: "/a" }))).json();
    expect(write.hookSpecificOutput.permissionDecision).toBe("deny");
    // If a dialog still opens (a hook missed), its PermissionRequest is refused too.
    const dialog = await (
      await hook(app, id, "PermissionRequest", preToolUse("Edit", { file_path: "/a" }))
    ).json();
    expect(dialog.hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: expect.stringContaining("write") },
    });
    expect(app.repo.get(id)!.status).not.toBe("permission_prompt");
    expect(await (await hook(app, id, "PreToolUse", preToolUse("Read", { file_path: "/a" }))).json()).toEqual(
      {},
    );
    expect(await (await hook(app, id, "PreToolUse", preToolUse("mcp__x__y", {}))).json()).toEqual({});
  });

  test("a custom policy; full and standard never answer allow (the agent's own prompt decides)", async () => {
    const { app, id } = await session();
    const custom = await app.request("PUT", `/v1/sessions/${id}/permissions`, {
      body: { allowRead: false, allowWrite: true, allowBash: true },
    });
    expect(await custom.json()).toEqual({
      profile: "custom",
      allowRead: false,
      allowWrite: true,
      allowBash: true,
    });
    expect(
      (await (await hook(app, id, "PreToolUse", preToolUse("Grep", { pattern: "x" }))).json())
        .hookSpecificOutput.permissionDecision,
    ).toBe("deny");
    for (const profile of ["standard", "full"]) {
      await app.request("PUT", `/v1/sessions/${id}/permission-profile`, { body: { profile } });
      for (const tool of ["Bash", "Write", "Read"]) {
        expect(await (await hook(app, id, "PreToolUse", preToolUse(tool, {}))).json()).toEqual({});
      }
    }
    expect((await (await app.request("GET", `/v1/sessions/${id}`)).json()).permissions.profile).toBe("full");
  });

  test("bad input: an unknown profile, a missing flag, an unknown session", async () => {
    const { app, id } = await session();
    const profile = await app.request("PUT", `/v1/sessions/${id}/permission-profile`, {
      body: { profile: "god" },
    });
    expect(profile.status).toBe(400);
    expect((await profile.json()).error).toContain("readonly, standard, full");
    const partial = await app.request("PUT", `/v1/sessions/${id}/permissions`, { body: { allowRead: true } });
    expect(partial.status).toBe(400);
    const missing = await app.request("PUT", "/v1/sessions/nope/permission-profile", {
      body: { profile: "full" },
    });
    expect((await missing.json()).code).toBe("SESSION_NOT_FOUND");
  });

  test("the unversioned aliases reach the same routes", async () => {
    const { app, id } = await session();
    const viaAlias = await app.request("PUT", `/sessions/${id}/permission-profile`, {
      body: { profile: "readonly" },
    });
    expect((await viaAlias.json()).profile).toBe("readonly");
    const policy = await app.request("PUT", `/sessions/${id}/permissions`, {
      body: { allowRead: true, allowWrite: true, allowBash: false },
    });
    expect((await policy.json()).profile).toBe("custom");
  });
});
