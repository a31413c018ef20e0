import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { AgentObservation } from "../../src/agents/agent.ts";
import { describeToolInput, HOOK_EVENTS, hookSettings, readHook } from "../../src/agents/claude/hooks.ts";
import { initialStatus, reduce } from "../../src/sessions/live/status.ts";

interface Recorded {
  path: string;
  body: Record<string, unknown> & { hook_event_name: string };
}

async function recorded(): Promise<Recorded[]> {
  const text = await Bun.file(
    join(import.meta.dir, "..", "fixtures", "hooks", "harness-hook-events.jsonl"),
  ).text();
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("Claude Code hook payloads → observations", () => {
  test("a plan to approve carries its first line as the detail and the whole plan", async () => {
    const request = (await recorded()).find(
      (r) => r.body.hook_event_name === "PermissionRequest" && r.body.tool_name === "ExitPlanMode",
    )!;
    expect(readHook("PermissionRequest", request.body).observation).toEqual({
      kind: "permission",
      request: {
        kind: "plan",
        tool: "ExitPlanMode",
        detail: "# Plan",
        plan: "# Plan\n\n1. Create hello.txt\n2. Say hello\n",
      },
    });
  });

  test("each recorded payload maps to the right kind", async () => {
    const kinds = new Map<string, Set<string>>();
    for (const { body } of await recorded()) {
      const obs = readHook(body.hook_event_name, body).observation;
      const set = kinds.get(body.hook_event_name) ?? new Set();
      set.add(obs?.kind ?? "none");
      kinds.set(body.hook_event_name, set);
    }
    expect([...(kinds.get("UserPromptSubmit") ?? [])]).toEqual(["prompt-submitted"]);
    expect([...(kinds.get("PreToolUse") ?? [])]).toEqual(["tool"]);
    expect([...(kinds.get("PostToolUse") ?? [])]).toEqual(["tool"]);
    expect([...(kinds.get("PermissionRequest") ?? [])]).toEqual(["permission"]);
    expect([...(kinds.get("Stop") ?? [])]).toEqual(["turn-ended"]);
    expect([...(kinds.get("StopFailure") ?? [])]).toEqual(["turn-failed"]);
    expect([...(kinds.get("SessionEnd") ?? [])]).toEqual(["session-ended"]);
    expect([...(kinds.get("SessionStart") ?? [])]).toEqual(["none"]);
    // "Claude needs your permission" (a dialog waits): ag looks at the screen if it knows none.
    expect([...(kinds.get("Notification") ?? [])]).toEqual(["dialog-waiting"]);
  });

  test("permission requests say what they are about", async () => {
    const requests = (await recorded())
      .filter((r) => r.body.hook_event_name === "PermissionRequest")
      .map(
        (r) =>
          readHook("PermissionRequest", r.body).observation as Extract<
            AgentObservation,
            { kind: "permission" }
          >,
      )
      .map((o) => o.request);
    expect(requests).toContainEqual({ kind: "tool", tool: "Bash", detail: "touch created-by-bash.txt" });
    expect(
      requests.some((r) => r.kind === "tool" && r.tool === "Write" && r.detail.endsWith("hello.txt")),
    ).toBe(true);
    expect(requests).toContainEqual({
      kind: "question",
      tool: "AskUserQuestion",
      detail: "Which color should the button be?",
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red", description: "A bold red button" },
        { index: 2, label: "Blue", description: "A calm blue button" },
      ],
    });
    expect(requests.some((r) => r.kind === "plan")).toBe(true);
  });

  test("prompt submissions carry the text and the prompt id", async () => {
    const first = (await recorded()).find((r) => r.body.hook_event_name === "UserPromptSubmit")!;
    expect(readHook("UserPromptSubmit", first.body).observation).toEqual({
      kind: "prompt-submitted",
      text: "say hello",
      promptId: first.body.prompt_id as string,
    });
  });

  test("tool hooks carry the tool and its use id; a permission request has none (it follows its tool's start)", async () => {
    const pre = (await recorded()).find((r) => r.body.hook_event_name === "PreToolUse")!;
    expect(readHook("PreToolUse", pre.body).observation).toEqual({
      kind: "tool",
      phase: "started",
      tool: pre.body.tool_name as string,
      toolUseId: pre.body.tool_use_id as string,
    });
    expect(readHook("PostToolUseFailure", { tool_name: "Bash" }).observation).toEqual({
      kind: "tool",
      phase: "finished",
      tool: "Bash",
      toolUseId: undefined,
    });
    expect(readHook("Notification", { notification_type: "idle_prompt" }).observation).toEqual({
      kind: "waiting-for-input",
    });
    expect(readHook("Notification", { notification_type: "auth_success" }).observation).toBeNull();
  });

  test("a rate-limit failure is flagged as such", () => {
    expect(readHook("StopFailure", { error: "rate_limit" }).observation).toEqual({
      kind: "turn-failed",
      error: "rate_limit",
      rateLimited: true,
    });
    expect(readHook("StopFailure", { error: "server_error" }).observation).toMatchObject({
      rateLimited: false,
    });
  });

  test("replaying the whole recorded run through the fusion never leaves a working agent idle mid-turn", async () => {
    let state = initialStatus(0, 120_000, "working", { booting: true });
    state = reduce(state, { kind: "screen-idle", interrupted: false }, "screen", 1).state;
    const statuses: string[] = [];
    let t = 10;
    for (const { body } of await recorded()) {
      const obs = readHook(body.hook_event_name, body).observation;
      if (!obs) continue;
      t += 10;
      state = reduce(state, obs, "hook", t).state;
      statuses.push(`${body.hook_event_name}:${state.status}`);
    }
    for (const line of statuses) {
      if (
        line.startsWith("UserPromptSubmit") ||
        line.startsWith("PreToolUse") ||
        line.startsWith("PostToolUse")
      ) {
        expect(line.endsWith(":working")).toBe(true);
      }
      if (line.startsWith("Stop:")) expect(line).toBe("Stop:idle");
    }
    // SessionEnd alone does not end a session: the process exiting does (see status.ts).
    expect(statuses.at(-1)).toBe("SessionEnd:idle");
  });
});

describe("hook settings", () => {
  test("every event posts to ag with the secret header; SessionStart runs the forwarder", () => {
    const settings = hookSettings({
      hookUrl: "http://127.0.0.1:9100/v1/hooks/claude/",
      secretHeader: "X-Svc-Hook-Secret",
      secret: "s3",
      forwarderCommand: (event) => `ag hook ${event}`,
    }) as Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>>;
    expect(Object.keys(settings).sort()).toEqual([...HOOK_EVENTS].sort());
    const pre = settings.PreToolUse![0]!;
    expect(pre.matcher).toBe("*");
    expect(pre.hooks[0]).toEqual({
      type: "http",
      url: "http://127.0.0.1:9100/v1/hooks/claude/PreToolUse",
      headers: { "X-Svc-Hook-Secret": "s3" },
      timeout: 10,
    });
    expect(settings.Stop![0]!.matcher).toBeUndefined();
    expect(settings.SessionStart![0]!.hooks[0]).toMatchObject({
      type: "command",
      command: "ag hook SessionStart",
    });
    expect(JSON.stringify(settings)).not.toContain("?");
  });

  test("tool inputs are summarised in one line", () => {
    expect(describeToolInput("Bash", { command: "ls -la" })).toBe("ls -la");
    expect(describeToolInput("Write", { file_path: "/w/a.txt", content: "x" })).toBe("/w/a.txt");
    expect(describeToolInput("Other", { a: "x".repeat(500) })).toHaveLength(200);
  });
});
