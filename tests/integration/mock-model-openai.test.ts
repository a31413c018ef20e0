import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type MockModel, startMockModel } from "../fakes/mock-model.ts";

/**
 * The mock model's OpenAI Responses face over real HTTP, with requests shaped like Codex CLI's
 * (0.169.0): the system prompt as a developer message, the cwd in an environment-context user
 * message, its own tools. The real CLI drives it in tests/e2e/codex*.test.ts.
 */
const mock: MockModel = startMockModel();
afterAll(() => mock.stop());
beforeEach(() => mock.reset());

type Item = Record<string, unknown>;
const TOOLS = [
  { type: "function", name: "exec_command" },
  { type: "custom", name: "apply_patch" },
  { type: "function", name: "request_user_input" },
];
const CONTEXT: Item[] = [
  { type: "message", role: "developer", content: [{ type: "input_text", text: "You are Codex." }] },
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "<environment_context>\n  <cwd>/w/p</cwd>\n</environment_context>" },
    ],
  },
];
const user = (text: string): Item => ({
  type: "message",
  role: "user",
  content: [{ type: "input_text", text }],
});

function responses(input: Item[], extra: Record<string, unknown> = {}) {
  return fetch(`${mock.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
    body: JSON.stringify({
      model: "gpt-5.5",
      input: [...CONTEXT, ...input],
      tools: TOOLS,
      stream: true,
      ...extra,
    }),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: SSE payloads are inspected field by field
type Json = Record<string, any>;

async function events(response: Response): Promise<Array<{ event: string; data: Json }>> {
  return (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((chunk) => {
      const [event, data] = chunk.split("\n");
      return { event: event!.replace("event: ", ""), data: JSON.parse(data!.replace("data: ", "")) };
    });
}

/** The output items of a completed streamed response. */
async function output(response: Response): Promise<Item[]> {
  const list = await events(response);
  const done = list.find((e) => e.event === "response.completed");
  return done?.data.response.output ?? [];
}

describe("the OpenAI Responses face", () => {
  test("a streamed answer: created, item added, text deltas, item done, completed with the usage", async () => {
    const list = await events(await responses([user("say hello")]));
    expect(list.map((e) => e.event).filter((e) => e !== "response.output_text.delta")).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_text.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const text = list
      .filter((e) => e.event === "response.output_text.delta")
      .map((e) => e.data.delta)
      .join("");
    expect(text).toBe("Hello from the mock model! 👋");
    const { usage } = list.at(-1)!.data.response;
    // Cached tokens are part of input_tokens, as OpenAI counts them.
    expect(usage.input_tokens).toBeGreaterThan(usage.input_tokens_details.cached_tokens);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect(mock.requests()[0]).toMatchObject({ face: "openai-responses", kind: "main", prompt: "say hello" });
  });

  test("Codex's context is no prompt; tools are named as the script knows them", async () => {
    await (await responses([user("say hello")])).text();
    expect(mock.requests()[0]).toMatchObject({
      history: ["say hello"],
      tools: ["Bash", "Write", "AskUserQuestion", "Edit"],
    });
  });

  test("a command asks to run unsandboxed, unless Codex told the model it never may", async () => {
    const [call] = await output(await responses([user("run cmd: touch x")]));
    expect(call).toMatchObject({ type: "function_call", name: "exec_command" });
    expect(JSON.parse(String(call!.arguments))).toMatchObject({
      cmd: "touch x",
      workdir: "/w/p",
      sandbox_permissions: "require_escalated",
      justification: "Run the requested command",
    });
    const never: Item = {
      type: "message",
      role: "developer",
      content: [{ type: "input_text", text: "Approval policy is currently never." }],
    };
    const [plain] = await output(await responses([never, user("run cmd: touch y")]));
    expect(JSON.parse(String(plain!.arguments)).sandbox_permissions).toBe("use_default");
  });

  test("a turn's second step answers the tool's output", async () => {
    const [call] = await output(await responses([user("run cmd: echo hi")]));
    const next = await output(
      await responses([
        user("run cmd: echo hi"),
        call!,
        {
          type: "function_call_output",
          call_id: call!.call_id,
          output: "Process exited with code 0\nOutput:\nhi",
        },
      ]),
    );
    expect(next[0]).toMatchObject({ type: "message", role: "assistant" });
    expect(JSON.stringify(next[0])).toContain("Output:\\nhi");
    expect(mock.requests()[1]).toMatchObject({ round: 1, rule: "run cmd" });
  });

  test("a write is an apply_patch custom call adding the file, relative to the cwd", async () => {
    const items = await output(await responses([user("edit file")]));
    expect(items[1]).toMatchObject({
      type: "custom_tool_call",
      name: "apply_patch",
      input: "*** Begin Patch\n*** Add File: hello.txt\n+hello from the mock\n*** End Patch\n",
    });
  });

  test("a JSON-schema request (Codex's task title) is a side request answered in JSON", async () => {
    const title = await output(
      await responses([user("Generate a concise title.\n\nUser prompt:\nsay hello")], {
        text: { format: { type: "json_schema", schema: { properties: { title: { type: "string" } } } } },
      }),
    );
    expect(JSON.stringify(title)).toContain('{\\"title\\":\\"Mock: say hello\\"}');
    expect(mock.requests()[0]).toMatchObject({ kind: "side" });
  });

  test("an error in OpenAI's shape with its status; a stream error is response.failed", async () => {
    const limited = await responses([user("rate limit")]);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await limited.json()).error).toMatchObject({ type: "rate_limit_error" });
    const list = await events(await responses([user("stream error")]));
    expect(list.at(-1)).toMatchObject({ event: "response.failed" });
  });

  test("a hang lasts until the client hangs up, and is logged as aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const aborted = fetch(`${mock.url}/v1/responses`, {
      method: "POST",
      body: JSON.stringify({ model: "gpt-5.5", input: [user("hang forever")], tools: TOOLS, stream: true }),
      signal: controller.signal,
    }).catch((error: Error) => error.name);
    expect(await aborted).toBe("AbortError");
    await Bun.sleep(100);
    expect(mock.requests()[0]).toMatchObject({ prompt: "hang forever", status: "aborted" });
  });
});
