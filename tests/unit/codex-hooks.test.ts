import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  denyReply,
  describeToolInput,
  HOOK_EVENTS,
  hookOverrides,
  patchFiles,
  readHook,
  toolCategory,
} from "../../src/agents/codex/hooks.ts";

// Hook payloads of the real Codex CLI 0.169.0 (one `{event, payload}` per line).
const recorded: Array<{ event: string; payload: Record<string, unknown> }> = readFileSync(
  join(import.meta.dir, "..", "fixtures", "agents", "codex", "0.169.0", "hooks.jsonl"),
  "utf8",
)
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));
const first = (event: string, tool?: string) =>
  recorded.find((r) => r.event === event && (!tool || r.payload.tool_name === tool))!.payload;

describe("Codex hook payloads → observations", () => {
  test("every event ag registers was captured, and names the thread and its rollout", () => {
    expect(new Set(recorded.map((r) => r.event))).toEqual(new Set(HOOK_EVENTS));
    for (const { event, payload } of recorded) {
      const reading = readHook(event, payload);
      expect(reading.conversationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(reading.transcriptPath).toMatch(/\/sessions\/\d{4}\/\d\d\/\d\d\/rollout-.*\.jsonl$/);
    }
  });

  test("a prompt, with the turn as its id (the rollout's prompt line carries the same)", () => {
    const payload = first("UserPromptSubmit");
    expect(readHook("UserPromptSubmit", payload).observation).toEqual({
      kind: "prompt-submitted",
      text: "say hello",
      promptId: payload.turn_id as string,
    });
  });

  test("an approval of a command names it; of a patch, the file it writes, made absolute", () => {
    expect(readHook("PermissionRequest", first("PermissionRequest", "Bash")).observation).toEqual({
      kind: "permission",
      request: { kind: "tool", tool: "Bash", detail: "touch approved.txt" },
    });
    expect(readHook("PermissionRequest", first("PermissionRequest", "apply_patch")).observation).toEqual({
      kind: "permission",
      request: { kind: "tool", tool: "apply_patch", detail: "/home/user/project/hello.txt" },
    });
  });

  test("tools start and finish by their call id; Stop and Interrupt end the turn", () => {
    const pre = first("PreToolUse");
    expect(readHook("PreToolUse", pre).observation).toEqual({
      kind: "tool",
      phase: "started",
      tool: "Bash",
      toolUseId: pre.tool_use_id as string,
    });
    expect(readHook("PostToolUse", first("PostToolUse")).observation).toMatchObject({ phase: "finished" });
    expect(readHook("Stop", first("Stop")).observation).toEqual({ kind: "turn-ended" });
    expect(readHook("Interrupt", first("Interrupt")).observation).toEqual({ kind: "turn-ended" });
    expect(readHook("SessionEnd", first("SessionEnd")).observation).toEqual({
      kind: "session-ended",
      reason: "other",
    });
    expect(readHook("SessionStart", first("SessionStart")).observation).toBeNull();
  });
});

describe("registering the hooks on Codex's command line", () => {
  test("one -c override per event, TOML, the command quoted; tool events match every tool", () => {
    const args = hookOverrides((event) => `/opt/ag hook ${event} --secret-file '/s/it"s'`);
    expect(args.filter((a) => a === "-c")).toHaveLength(HOOK_EVENTS.length);
    expect(args).toContain(
      `hooks.PreToolUse=[{matcher="*",hooks=[{type="command",command="/opt/ag hook PreToolUse --secret-file '/s/it\\"s'",timeout=10}]}]`,
    );
    // Codex allows Interrupt and SessionEnd hooks 3 s at most (and warns about more).
    expect(args.find((a) => a.startsWith("hooks.Interrupt="))).toContain("timeout=3}");
    expect(args.find((a) => a.startsWith("hooks.Stop="))).toStartWith("hooks.Stop=[{hooks=[");
  });

  test("only the events asked for", () => {
    const args = hookOverrides(() => "x", ["Stop"]);
    expect(args).toEqual(["-c", `hooks.Stop=[{hooks=[{type="command",command="x",timeout=10}]}]`]);
  });
});

describe("policy", () => {
  test("tools by kind: commands, patches (writes), images (reads); anything else is other", () => {
    expect(toolCategory("Bash")).toBe("bash");
    expect(toolCategory("apply_patch")).toBe("write");
    expect(toolCategory("view_image")).toBe("read");
    expect(toolCategory("mcp__github__create_issue")).toBe("other");
  });

  test("only the pre-tool hook refuses, with the reason Codex gives the model", () => {
    expect(denyReply("PreToolUse", "no")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "no",
      },
    });
    expect(denyReply("PermissionRequest", "no")).toBeNull();
    expect(denyReply("Stop", "no")).toBeNull();
  });

  test("a patch's files, and a tool input described in one line", () => {
    const patch =
      "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Add File: b/c.txt\n+z\n*** End Patch";
    expect(patchFiles(patch)).toEqual(["a.txt", "b/c.txt"]);
    expect(describeToolInput("apply_patch", { command: patch }, "/w")).toBe("/w/a.txt");
    expect(describeToolInput("apply_patch", { command: "*** Delete File: /abs/x" }, "/w")).toBe("/abs/x");
    expect(describeToolInput("request_user_input", { questions: [] })).toBe('{"questions":[]}');
  });
});
