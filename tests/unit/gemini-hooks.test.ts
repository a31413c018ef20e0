import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createGeminiAdapter, isGeminiProcess } from "../../src/agents/gemini/adapter.ts";
import { HOOK_EVENTS, hookSettings, readHook } from "../../src/agents/gemini/hooks.ts";

/** The Gemini CLI's hook payloads (captured, 0.61.0) read for the state, the policy and the keys. */
const DIR = join(import.meta.dir, "../fixtures/agents/gemini/0.61.0");
const captured = (file: string) =>
  readFileSync(join(DIR, file), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; payload: Record<string, unknown> });
const adapter = createGeminiAdapter({
  home: "/home/u",
  dataDir: null,
  trustWorkdir: true,
  selfCommand: ["ag"],
  isRoot: false,
});

describe("Gemini CLI hooks", () => {
  test("ask_user: its BeforeTool carries the question and options; its notification only says a dialog waits", () => {
    const [before, notification] = captured("hooks-ask-user.jsonl");
    expect(readHook(before!.event, before!.payload).observation).toEqual({
      kind: "permission",
      request: {
        kind: "question",
        tool: "ask_user",
        detail: "Which color should the button be?",
        question: "Which color should the button be?",
        options: [
          { index: 1, label: "Red", description: "A bold red button" },
          { index: 2, label: "Blue", description: "A calm blue button" },
        ],
      },
    });
    expect(readHook(notification!.event, notification!.payload).observation).toEqual({
      kind: "dialog-waiting",
    });
  });

  test("a dialog's notification names its tool and what it is about", () => {
    const dialogs = captured("hooks.jsonl")
      .filter((h) => h.event === "Notification")
      .map((h) => readHook(h.event, h.payload).observation);
    expect(dialogs).toEqual([
      {
        kind: "permission",
        request: { kind: "tool", tool: "run_shell_command", detail: "touch approved.txt" },
      },
      {
        kind: "permission",
        request: { kind: "tool", tool: "run_shell_command", detail: "touch rejected.txt" },
      },
      {
        kind: "permission",
        request: { kind: "tool", tool: "write_file", detail: "/home/user/project/hello.txt" },
      },
    ]);
    const plan = {
      notification_type: "ToolPermission",
      details: { type: "exit_plan_mode", title: "Plan Approval" },
    };
    expect(readHook("Notification", plan).observation).toMatchObject({ request: { kind: "plan" } });
  });

  test("every payload names the conversation and its file; BeforeAgent the exact prompt", () => {
    for (const { event, payload } of captured("hooks.jsonl")) {
      const reading = readHook(event, payload);
      expect(reading.conversationId).toBe("0f1c7a2e-5e55-4a0e-8e00-000000022040");
      expect(reading.transcriptPath).toEndWith("session-2026-11-24T18-25-0f1c7a2e.jsonl");
    }
    // Named under the launch's own GEMINI_CLI_HOME, recorded where it is: the user's tmp/.
    const [first] = captured("hooks.jsonl");
    expect(adapter.hooks.read(first!.event, first!.payload).transcriptPath).toBe(
      "/home/u/.gemini/tmp/work/chats/session-2026-11-24T18-25-0f1c7a2e.jsonl",
    );
    expect(readHook("BeforeAgent", { prompt: "a\tb\n  c" }).observation).toEqual({
      kind: "prompt-submitted",
      text: "a\tb\n  c",
    });
  });

  test("registered as command hooks through ag hook; tool events match every tool", () => {
    const hooks = hookSettings((event) => `ag hook ${event}`) as Record<
      string,
      Array<Record<string, unknown>>
    >;
    expect(Object.keys(hooks).sort()).toEqual([...HOOK_EVENTS].sort());
    expect(hooks.BeforeTool).toEqual([
      {
        matcher: "*",
        hooks: [{ type: "command", name: "ag", command: "ag hook BeforeTool", timeout: 10_000 }],
      },
    ]);
    expect(hooks.AfterAgent![0]!.matcher).toBeUndefined();
    // Neither the per-request PreCompress nor the per-chunk model hooks, nor SessionStart.
    for (const event of ["PreCompress", "BeforeModel", "AfterModel", "SessionStart"])
      expect(hooks[event]).toBeUndefined();
  });

  test("the policy: BeforeTool's tool by kind, and its refusal", () => {
    expect(adapter.policy.tool("BeforeTool", { tool_name: "run_shell_command" })).toEqual({
      name: "run_shell_command",
      category: "bash",
    });
    expect(adapter.policy.tool("BeforeTool", { tool_name: "replace" })?.category).toBe("write");
    expect(adapter.policy.tool("BeforeTool", { tool_name: "read_file" })?.category).toBe("read");
    expect(adapter.policy.tool("BeforeTool", { tool_name: "ask_user" })?.category).toBe("other");
    expect(adapter.policy.tool("AfterTool", { tool_name: "run_shell_command" })).toBeNull();
    expect(adapter.policy.deny("BeforeTool", "no")).toEqual({ decision: "deny", reason: "no" });
    expect(adapter.policy.deny("Notification", "no")).toBeNull();
  });
});

describe("the Gemini adapter's keys and words", () => {
  test("a digit answers a dialog at once; Escape refuses; a plan keeps the session's mode", () => {
    expect(adapter.keys.approve({ kind: "tool" })).toEqual(["1"]);
    expect(adapter.keys.approve({ kind: "plan" })).toEqual(["2"]);
    expect(adapter.keys.approve({ kind: "trust", dialog: "folder-trust" })).toEqual(["1"]);
    expect(adapter.keys.reject({ kind: "tool" })).toEqual(["Escape"]);
    expect(adapter.keys.reject({ kind: "trust", dialog: "folder-trust" })).toEqual(["3"]);
    expect(adapter.keys.interrupt).toEqual(["Escape"]);
  });

  test("a question: an option's digit, or the custom row, the text and Enter", () => {
    const pending = {
      id: "perm-1",
      kind: "question" as const,
      detail: "Color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    };
    expect(adapter.keys.answer(pending, { option: 2 })).toEqual([{ keys: ["2"] }]);
    expect(adapter.keys.answer(pending, { text: "Green" })).toEqual([
      { keys: ["3"] },
      { text: "Green" },
      { keys: ["Enter"] },
    ]);
    expect(adapter.keys.answer(pending, { option: 11 })).toHaveLength(11);
  });

  test("neutral permission modes it has; prompts as typed; commands it never records", () => {
    expect([...adapter.permissionModes]).toEqual(["default", "acceptEdits", "bypassPermissions", "plan"]);
    expect(adapter.isSubmission("a\tb\n", "a\tb")).toBe(true);
    expect(adapter.isSubmission("and now?", "and now")).toBe(false);
    expect(adapter.recordsLate("/stats")).toBe(true);
    expect(adapter.recordsLate("!ls")).toBe(true);
    expect(adapter.recordsLate("say hello")).toBe(false);
  });

  test("its processes: npm's bin, or node running the package's bundle (relaunched with flags)", () => {
    expect(isGeminiProcess(["gemini", "--session-id", "x"])).toBe(true);
    expect(
      isGeminiProcess(["/usr/bin/node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js"]),
    ).toBe(true);
    expect(
      isGeminiProcess([
        "/usr/bin/node",
        "--max-old-space-size=8192",
        "/w/node_modules/.bin/gemini",
        "-m",
        "x",
      ]),
    ).toBe(true);
    expect(isGeminiProcess(["bash", "-c", "gemini"])).toBe(false);
    expect(isGeminiProcess(["node", "server.js"])).toBe(false);
  });

  test("prices by model name", () => {
    expect(adapter.prices["gemini-2.5-flash"]).toEqual({ input: 0.3, output: 2.5 });
    const flashLite = Object.keys(adapter.prices).find((k) => "gemini-2.5-flash-lite-001".includes(k));
    expect(flashLite).toBe("gemini-2.5-flash-lite");
  });
});
