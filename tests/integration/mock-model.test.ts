import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type MockModel, startMockModel } from "../fakes/mock-model.ts";

// The mock model over real HTTP, shaped like the requests Claude Code sends.
const mock: MockModel = startMockModel();
afterAll(() => mock.stop());
beforeEach(() => mock.reset());

type Message = { role: "user" | "assistant"; content: unknown };
const TOOLS = [{ name: "Bash" }, { name: "Write" }, { name: "AskUserQuestion" }];

function messages(body: Record<string, unknown>, path = "/v1/messages") {
  return fetch(`${mock.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "sk-ant-test" },
    body: JSON.stringify({ model: "claude-test", max_tokens: 1024, tools: TOOLS, ...body }),
  });
}

const ask = (prompt: string, extra: Record<string, unknown> = {}) =>
  messages({ messages: [{ role: "user", content: prompt }], ...extra });

type SseEvent = { event: string; data: { type: string; delta?: { type: string; text?: string } } };

async function events(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((chunk) => {
      const [eventLine, dataLine] = chunk.split("\n");
      return { event: eventLine!.replace("event: ", ""), data: JSON.parse(dataLine!.replace("data: ", "")) };
    });
}

function streamedText(list: SseEvent[]): string {
  return list
    .filter((e) => e.data.type === "content_block_delta" && e.data.delta?.type === "text_delta")
    .map((e) => e.data.delta?.text)
    .join("");
}

describe("the mock model API", () => {
  test("a streamed text reply: the Messages API event sequence", async () => {
    const response = await ask("say hello", { stream: true });
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const list = await events(response);
    expect(list.map((e) => e.event).filter((e) => e !== "content_block_delta")).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(list.every((e) => e.event === e.data.type)).toBe(true);
    expect(streamedText(list)).toBe("Hello from the mock model! 👋");
    expect(list.at(-2)!.data).toMatchObject({
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 8 },
    });
  });

  test("a JSON reply with a thinking block", async () => {
    const body = await (await ask("think about it")).json();
    expect(body.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "text"]);
    expect(body.content[0].signature).toHaveLength(64);
    expect(body.content[1].text).toBe("After thinking: the answer is 4.");
  });

  test("a scripted turn: a tool call first, then the answer with the tool's result", async () => {
    const first = await (await ask("run cmd: echo hi")).json();
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content[0];
    expect(call).toMatchObject({ type: "tool_use", name: "Bash", input: { command: "echo hi" } });
    const history: Message[] = [
      { role: "user", content: "run cmd: echo hi" },
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "hi" }] },
    ];
    const second = await (await messages({ messages: history })).json();
    expect(second.content[0].text).toBe("Command finished:\n\nhi");
    expect(mock.requests().map((r) => [r.prompt, r.round, r.rule])).toEqual([
      ["run cmd: echo hi", 0, "run cmd"],
      ["run cmd: echo hi", 1, "run cmd"],
    ]);
  });

  test("a tool the request does not offer: the step's fallback", async () => {
    const body = await (
      await messages({ tools: [{ name: "Bash" }], messages: [{ role: "user", content: "ask me" }] })
    ).json();
    expect(body.content[0].text).toContain("AskUserQuestion tool is not available");
  });

  test("API errors: status, Anthropic error body, retry-after", async () => {
    const limited = await ask("rate limit");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await limited.json()).error.type).toBe("rate_limit_error");
    expect((await ask("overloaded")).status).toBe(529);
    expect((await ask("server error")).status).toBe(500);
    expect((await ask("bad request")).status).toBe(400);
    expect(mock.requests().map((r) => r.status)).toEqual([429, 529, 500, 400]);
  });

  test("a stream that breaks off with an error event; its non-streaming retry fails too", async () => {
    const list = await events(await ask("stream error", { stream: true }));
    expect(list.at(-1)).toMatchObject({ event: "error", data: { error: { type: "overloaded_error" } } });
    expect(streamedText(list)).toBe("Starting to answer and then");
    expect((await ask("stream error")).status).toBe(529);
  });

  test("anything else: an echo of what arrived", async () => {
    const body = await (await ask("first line\nsecond line")).json();
    expect(body.content[0].text).toBe("Mock reply to: first line (22 chars, 2 lines)");
  });

  test("side requests (no tools) get a session title", async () => {
    const response = await messages({
      tools: undefined,
      system: [{ type: "text", text: "Generate a concise, sentence-case title. Return JSON." }],
      messages: [{ role: "user", content: "say hello to the world please" }],
    });
    expect(JSON.parse((await response.json()).content[0].text)).toEqual({
      title: "Mock: say hello to the world",
    });
    expect(mock.requests()[0]).toMatchObject({ kind: "side", rule: "side-default" });
  });

  test("HEAD /, count_tokens, models, and a 404 for the rest", async () => {
    expect((await fetch(mock.url, { method: "HEAD" })).status).toBe(200);
    const tokens = await (
      await messages({ messages: [{ role: "user", content: "x".repeat(400) }] }, "/v1/messages/count_tokens")
    ).json();
    expect(tokens.input_tokens).toBeGreaterThan(100);
    const models = await (await fetch(`${mock.url}/v1/models`)).json();
    expect(models.data.map((m: { id: string }) => m.id)).toContain("claude-sonnet-4-5");
    expect((await fetch(`${mock.url}/v1/models/claude-haiku-4-5`)).status).toBe(200);
    const missing = await fetch(`${mock.url}/v1/files`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.type).toBe("not_found_error");
  });

  test("a hanging reply is logged as aborted once the client hangs up", async () => {
    const abort = new AbortController();
    const hung = fetch(`${mock.url}/v1/messages`, {
      method: "POST",
      signal: abort.signal,
      body: JSON.stringify({
        stream: true,
        tools: TOOLS,
        messages: [{ role: "user", content: "hang forever" }],
      }),
    }).catch((err: Error) => err.name);
    await Bun.sleep(100);
    abort.abort();
    expect(await hung).toBe("AbortError");
    await Bun.sleep(100);
    expect(mock.requests()[0]?.status).toBe("aborted");
  });
});

describe("scripting the mock", () => {
  test("the request log holds the exact human prompt, without Claude Code's reminders", async () => {
    const prompt = `line one\n  indented "quoted" $HOME \`tick\`\n${"x".repeat(5000)}\nlast`;
    await messages({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>\nCwd is /tmp\n</system-reminder>" },
            { type: "text", text: prompt },
          ],
        },
      ],
    });
    const [logged] = (await (await fetch(`${mock.url}/_mock/requests`)).json()) as Array<{
      prompt: string;
      kind: string;
    }>;
    expect(logged!.prompt).toBe(prompt);
    expect(logged!.kind).toBe("main");
  });

  test("scenario rules with `times`: fail twice, then succeed", async () => {
    const scripted = startMockModel({
      scenario: {
        builtins: false,
        rules: [
          {
            name: "flaky",
            match: "flaky",
            times: 2,
            reply: { error: { status: 429, type: "rate_limit_error" } },
          },
          { name: "ok", match: "flaky", reply: { text: "third time lucky" } },
        ],
        fallback: { text: "no rule for {{prompt_first_line}}" },
      },
    });
    try {
      const send = () =>
        fetch(`${scripted.url}/v1/messages`, {
          method: "POST",
          body: JSON.stringify({ tools: TOOLS, messages: [{ role: "user", content: "be flaky" }] }),
        });
      expect([(await send()).status, (await send()).status]).toEqual([429, 429]);
      expect((await (await send()).json()).content[0].text).toBe("third time lucky");
      const other = await fetch(`${scripted.url}/v1/messages`, {
        method: "POST",
        body: JSON.stringify({ tools: TOOLS, messages: [{ role: "user", content: "say hello" }] }),
      });
      expect((await other.json()).content[0].text).toBe("no rule for say hello");
    } finally {
      await scripted.stop();
    }
  });

  test("runtime rules over HTTP come first; regex groups fill the reply", async () => {
    const added = await fetch(`${mock.url}/_mock/rules`, {
      method: "POST",
      body: JSON.stringify({
        rules: [{ name: "greet", regex: "say hello to (\\w+)", reply: { text: "Hi {{1}}!" } }],
      }),
    });
    expect(await added.json()).toEqual({ rules: 1 });
    expect((await (await ask("say hello to Ada")).json()).content[0].text).toBe("Hi Ada!");
    mock.addRules([{ any: true, reply: { text: "caught all" } }], { replace: true });
    expect((await (await ask("say hello to Ada")).json()).content[0].text).toBe("caught all");
  });

  test("queued replies answer the next main requests whatever their prompt", async () => {
    await fetch(`${mock.url}/_mock/enqueue`, {
      method: "POST",
      body: JSON.stringify({ replies: [{ text: "first queued" }, { text: "second: {{prompt}}" }] }),
    });
    expect((await (await ask("say hello")).json()).content[0].text).toBe("first queued");
    expect((await (await ask("anything")).json()).content[0].text).toBe("second: anything");
    expect((await (await ask("say hello")).json()).content[0].text).toBe("Hello from the mock model! 👋");
    expect(mock.requests().map((r) => r.rule)).toEqual(["queued", "queued", "hello"]);
  });

  test("reset forgets rules, the queue and the log", async () => {
    mock.addRules([{ any: true, reply: { text: "rule" } }]);
    mock.enqueue({ text: "queued" });
    await ask("x");
    await fetch(`${mock.url}/_mock/reset`, { method: "POST" });
    expect(mock.requests()).toEqual([]);
    expect((await (await ask("say hello")).json()).content[0].text).toBe("Hello from the mock model! 👋");
  });
});
