import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type MockModel, startMockModel } from "../fakes/mock-model.ts";

/**
 * The mock model over real HTTP, spoken to as OpenCode 1.18.33 does (its anthropic provider:
 * the same /v1/messages, its user agent, its own tool names and argument shapes).
 */
const mock: MockModel = startMockModel();
afterAll(() => mock.stop());
beforeEach(() => mock.reset());

const OPENCODE_TOOLS = [
  "bash",
  "edit",
  "glob",
  "grep",
  "question",
  "read",
  "skill",
  "task",
  "todowrite",
  "webfetch",
  "write",
];

function post(
  body: Record<string, unknown>,
  userAgent = "opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14",
) {
  return fetch(`${mock.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "mock-key", "user-agent": userAgent },
    body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 1024, ...body }),
  });
}
const system = "You are opencode.\n<env>\n  Working directory: /work/here\n</env>";
const ask = (messages: unknown[], tools = OPENCODE_TOOLS) =>
  post({ system, messages, tools: tools.map((name) => ({ name, input_schema: { type: "object" } })) });
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

describe("the mock model's OpenCode face", () => {
  test("script tools come out as OpenCode's: bash without a description, write with filePath", async () => {
    const bash = (await (await ask([user("run cmd: touch x.txt")])).json()) as {
      content: Array<Record<string, unknown>>;
    };
    expect(bash.content.find((b) => b.type === "tool_use")).toMatchObject({
      name: "bash",
      input: { command: "touch x.txt" },
    });
    const write = (await (await ask([user("edit file")])).json()) as {
      content: Array<Record<string, unknown>>;
    };
    expect(write.content.find((b) => b.type === "tool_use")).toMatchObject({
      name: "write",
      input: { filePath: "/work/here/hello.txt", content: "hello from the mock\n" },
    });
    expect(mock.requests().map((r) => [r.face, r.rule])).toEqual([
      ["opencode", "run cmd"],
      ["opencode", "edit file"],
    ]);
    expect(mock.requests()[0]!.tools).toContain("AskUserQuestion");
  });

  test("the question tool: options out, the answer's round back in", async () => {
    const asked = (await (await ask([user("ask me")])).json()) as { content: Array<Record<string, unknown>> };
    const call = asked.content.find((b) => b.type === "tool_use")!;
    expect(call).toMatchObject({
      name: "question",
      input: {
        questions: [
          { question: "Which color should the button be?", options: [{ label: "Red" }, { label: "Blue" }] },
        ],
      },
    });
    const answered = await ask([
      user("ask me"),
      { role: "assistant", content: [call] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: call.id, content: '"Which color?"="Blue"' }],
      },
    ]);
    expect(JSON.stringify(await answered.json())).toContain("Thanks for answering");
    expect(mock.requests()[1]).toMatchObject({ round: 1, prompt: "ask me" });
  });

  test("its title request gets a plain title, not JSON", async () => {
    const response = await post({
      system: "You are a title generator. You output ONLY a thread title. ... no JSON ...",
      messages: [user("say hello")],
    });
    const body = (await response.json()) as { content: Array<{ text: string }> };
    expect(body.content[0]!.text).toBe("Mock: say hello");
  });

  test("Claude Code's requests on the same path still meet the Anthropic face", async () => {
    const response = await post(
      { messages: [user("run cmd: ls")], tools: [{ name: "Bash", input_schema: { type: "object" } }] },
      "claude-cli/2.1.197 (external, cli)",
    );
    const body = (await response.json()) as { content: Array<Record<string, unknown>> };
    expect(body.content.find((b) => b.type === "tool_use")).toMatchObject({
      name: "Bash",
      input: { command: "ls" },
    });
    expect(mock.requests()[0]!.face).toBe("anthropic");
  });
});
