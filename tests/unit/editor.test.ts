import { describe, expect, test } from "bun:test";
import type { AgentInfo } from "../../src/agents/index.ts";
import { promptText } from "../../src/editor/agent.ts";
import { toRequestError } from "../../src/editor/errors.ts";
import { applyOption, type Choices, configOptions, fitChoices, modeState } from "../../src/editor/options.ts";
import { answerPermission, permissionRequest } from "../../src/editor/permissions.ts";
import type { AgApi } from "../../src/editor/port.ts";
import { readAfter, toolKind, toUpdates } from "../../src/editor/transcript.ts";
import type { PendingPermission } from "../../src/sessions/index.ts";
import { AgError } from "../../src/shared/errors.ts";
import type { TranscriptMessage } from "../../src/transcript/cursor.ts";

/** The pure parts of `ag acp` (src/editor/): what ag's sessions, prompts and transcripts are in ACP. */

const agent = (over: Partial<AgentInfo>): AgentInfo =>
  ({
    id: "claude",
    name: "Claude Code",
    installed: true,
    drivers: ["tmux", "acp"],
    permissionModes: ["default", "acceptEdits", "bypassPermissions", "plan"],
    ...over,
  }) as AgentInfo;
const AGENTS = [
  agent({}),
  agent({ id: "codex", name: "Codex", drivers: ["tmux"], permissionModes: ["default", "bypassPermissions"] }),
  agent({ id: "gemini", name: "Gemini CLI", installed: false }),
];
const CHOICES: Choices = { agent: "claude", driver: "acp", permissionMode: "acceptEdits", model: null };

describe("choices: modes and config options", () => {
  test("the options: installed agents, the agent's drivers, its modes, the default model and the tiers", () => {
    const options = configOptions(CHOICES, AGENTS, ["haiku", "opus"]);
    const values = (id: string) =>
      (options.find((o) => o.id === id) as { options: Array<{ value: string }> }).options.map((o) => o.value);
    expect(options.map((o) => [o.id, o.currentValue, o.category ?? null])).toEqual([
      ["agent", "claude", null],
      ["driver", "acp", null],
      ["mode", "acceptEdits", "mode"],
      ["model", "default", "model"],
    ]);
    expect(values("agent")).toEqual(["claude", "codex"]);
    expect(values("model")).toEqual(["default", "haiku", "opus"]);
    expect(modeState(CHOICES, AGENTS).availableModes.map((m) => m.id)).toEqual(values("mode"));
  });

  test("another agent keeps what it has and falls back for what it lacks", () => {
    const codex = applyOption(CHOICES, AGENTS, [], "agent", "codex");
    expect(codex).toEqual({ agent: "codex", driver: "tmux", permissionMode: "default", model: null });
    expect(fitChoices({ ...CHOICES, permissionMode: "bypassPermissions" }, AGENTS).permissionMode).toBe(
      "bypassPermissions",
    );
  });

  test("a model picked, and back to the agent's default; a value not offered is refused", () => {
    const opus = applyOption(CHOICES, AGENTS, ["opus"], "model", "opus");
    expect(opus.model).toBe("opus");
    expect(applyOption(opus, AGENTS, ["opus"], "model", "default").model).toBeNull();
    expect(() => applyOption(CHOICES, AGENTS, [], "driver", "ssh")).toThrow(/driver is one of tmux, acp/);
    expect(() => applyOption(CHOICES, AGENTS, [], "nope", "x")).toThrow(/no option nope/);
  });
});

const entry = (over: Partial<TranscriptMessage>): TranscriptMessage => ({
  id: 1,
  role: "assistant",
  kind: "text",
  text: "",
  timestamp: null,
  uuid: null,
  ...over,
});

describe("the transcript as session updates", () => {
  test("prompts (unless the editor sent them), replies, thoughts", () => {
    const prompt = entry({ role: "user", kind: "prompt", text: "hi" });
    expect(toUpdates(prompt, { echoUser: true })).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
    ]);
    expect(toUpdates(prompt, { echoUser: false })).toEqual([]);
    expect(toUpdates(entry({ text: "Hello" }), { echoUser: true })[0]?.sessionUpdate).toBe(
      "agent_message_chunk",
    );
    expect(toUpdates(entry({ kind: "thinking", text: "hmm" }), { echoUser: true })[0]?.sessionUpdate).toBe(
      "agent_thought_chunk",
    );
    expect(toUpdates(entry({ kind: "system", text: "turn_duration" }), { echoUser: true })).toEqual([]);
  });

  test("a tool use is a call in progress; its result completes or fails it", () => {
    const use = entry({
      kind: "tool_use",
      toolName: "Write",
      toolUseId: "t1",
      toolInput: { file_path: "/w/a.txt", content: "x" },
    });
    expect(toUpdates(use, { echoUser: true })).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "Write /w/a.txt",
        kind: "edit",
        status: "in_progress",
        rawInput: { file_path: "/w/a.txt", content: "x" },
      },
    ]);
    const failed = entry({ role: "user", kind: "tool_result", toolUseId: "t1", isError: true, text: "no" });
    expect(toUpdates(failed, { echoUser: true })[0]).toMatchObject({
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      status: "failed",
    });
  });

  test("Claude Code's todo list is the plan", () => {
    const todos = entry({
      kind: "tool_use",
      toolName: "TodoWrite",
      toolUseId: "t2",
      toolInput: {
        todos: [
          { content: "read", status: "completed" },
          { content: "write", status: "in_progress" },
        ],
      },
    });
    expect(toUpdates(todos, { echoUser: true })).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "read", status: "completed", priority: "medium" },
          { content: "write", status: "in_progress", priority: "medium" },
        ],
      },
    ]);
  });

  test("tool kinds by name", () => {
    expect(["Read", "Edit", "Bash", "Grep", "WebFetch", "Task"].map(toolKind)).toEqual([
      "read",
      "edit",
      "execute",
      "search",
      "fetch",
      "other",
    ]);
  });
});

describe("permissions", () => {
  const acpPending: PendingPermission = {
    id: "p1",
    kind: "tool",
    tool: "edit",
    detail: "Write a.txt",
    options: [
      { index: 1, label: "Allow", description: "allow_once", optionId: "a" },
      { index: 2, label: "Reject", description: "reject_once", optionId: "r" },
    ],
    toolInput: { toolCallId: "call-9", rawInput: { path: "a.txt" } },
  };
  const tmuxPending: PendingPermission = { id: "p2", kind: "tool", tool: "Bash", detail: "ls -la" };

  test("an ACP agent's own options and tool call; a terminal agent's allow and reject", () => {
    const request = permissionRequest("s", acpPending);
    expect(request.toolCall).toMatchObject({ toolCallId: "call-9", title: "Write a.txt", kind: "edit" });
    expect(request.options).toEqual([
      { optionId: "1", name: "Allow", kind: "allow_once" },
      { optionId: "2", name: "Reject", kind: "reject_once" },
    ]);
    const terminal = permissionRequest("s", tmuxPending);
    expect(terminal.toolCall).toMatchObject({ toolCallId: "ag-permission-p2", kind: "execute" });
    expect(terminal.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
  });

  test("the pick goes to ag for that very prompt", async () => {
    const calls: unknown[][] = [];
    const api: AgApi = {
      get: async () => ({}) as never,
      send: async (...args: unknown[]) => {
        calls.push(args);
        return {} as never;
      },
    };
    await answerPermission(api, "S", acpPending, "2");
    const [allow, reject] = permissionRequest("s", tmuxPending).options;
    await answerPermission(api, "S", tmuxPending, allow!.optionId);
    await answerPermission(api, "S", tmuxPending, reject!.optionId);
    expect(calls).toEqual([
      ["POST", "/v1/sessions/S/answer", { option: 2, permissionId: "p1" }],
      ["POST", "/v1/sessions/S/approve", { permissionId: "p2" }],
      ["POST", "/v1/sessions/S/reject", { permissionId: "p2" }],
    ]);
  });
});

test("a prompt's content as text: text, a link's address, an embedded resource's text", () => {
  expect(
    promptText([
      { type: "text", text: "look" },
      { type: "resource_link", uri: "file:///a.ts", name: "a.ts" },
      { type: "resource", resource: { uri: "file:///b.ts", text: "const b = 1;" } },
      { type: "image", data: "", mimeType: "image/png" },
    ]),
  ).toBe("look\n\nfile:///a.ts\n\nfile:///b.ts:\nconst b = 1;");
});

test("ag's errors keep their code in ACP: not found, invalid params, invalid request, the rest internal", () => {
  expect(toRequestError(new AgError("SESSION_NOT_FOUND", "gone"))).toMatchObject({
    code: -32002,
    data: { code: "SESSION_NOT_FOUND", statusCode: 404 },
  });
  expect(toRequestError(new AgError("VALIDATION_ERROR", "bad")).code).toBe(-32602);
  expect(toRequestError(new AgError("CONFLICT", "running")).code).toBe(-32600);
  expect(toRequestError(new Error("boom"))).toMatchObject({ code: -32603, data: { code: "INTERNAL_ERROR" } });
});

test("the entries after an id: paged backwards from the newest, each once, oldest first", async () => {
  const all = Array.from({ length: 450 }, (_, i) => entry({ id: i + 1, text: `m${i + 1}` }));
  const asked: string[] = [];
  const api: AgApi = {
    send: async () => ({}) as never,
    async get<T>(path: string) {
      asked.push(path.slice(path.indexOf("?")));
      const query = new URLSearchParams(path.slice(path.indexOf("?") + 1));
      const before = Number(query.get("before_id") ?? all.length + 1);
      const limit = Number(query.get("limit"));
      const messages = all.filter((m) => m.id < before).slice(-limit);
      return {
        messages,
        has_more: (messages[0]?.id ?? 1) > 1,
        oldest_id: messages[0]?.id ?? 0,
        newest_id: messages.at(-1)?.id ?? 0,
      } as T;
    },
  };
  expect((await readAfter(api, "S", 0)).map((m) => m.id)).toEqual(all.map((m) => m.id));
  expect(asked).toEqual(["?limit=200", "?limit=200&before_id=251", "?limit=200&before_id=51"]);
  asked.length = 0;
  expect((await readAfter(api, "S", 440)).map((m) => m.id)).toEqual([
    441, 442, 443, 444, 445, 446, 447, 448, 449, 450,
  ]);
  expect(asked).toEqual(["?limit=200"]);
});
