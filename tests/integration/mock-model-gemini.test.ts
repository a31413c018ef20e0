import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type MockModel, startMockModel } from "../fakes/mock-model.ts";

/**
 * The mock model's Gemini face over real HTTP, with requests shaped as the Gemini CLI 0.61.0
 * sends them: the start-of-chat context as the first user part, its own tool names, SSE replies
 * that the CLI records (text chunks, whole function calls, usage on the last frame).
 */
const mock: MockModel = startMockModel();
afterAll(() => mock.stop());
beforeEach(() => mock.reset());

const TOOLS = [
  {
    functionDeclarations: ["run_shell_command", "write_file", "replace", "read_file", "ask_user"].map(
      (name) => ({ name }),
    ),
  },
];
const CONTEXT =
  "<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /work/project\n</session_context>";
type Content = { role: string; parts: Array<Record<string, unknown>> };

function generate(
  contents: Content[],
  options: { stream?: boolean; tools?: unknown; signal?: AbortSignal } = {},
) {
  const method = options.stream === false ? "generateContent" : "streamGenerateContent?alt=sse";
  return fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "mock" },
    body: JSON.stringify({
      contents,
      tools: options.tools ?? TOOLS,
      systemInstruction: { parts: [{ text: "You are Gemini." }] },
    }),
    signal: options.signal,
  });
}
const ask = (prompt: string, options = {}) =>
  generate([{ role: "user", parts: [{ text: CONTEXT }, { text: prompt }] }], options);

type Frame = {
  candidates?: Array<{ content: { parts: Array<Record<string, unknown>> }; finishReason?: string }>;
  usageMetadata?: Record<string, number>;
  error?: unknown;
};
async function frames(response: Response): Promise<Frame[]> {
  const text = await response.text();
  return text
    .split("\r\n\r\n")
    .filter(Boolean)
    .map((chunk) => JSON.parse(chunk.replace(/^data: /, "")));
}
const partsOf = (list: Frame[]) => list.flatMap((f) => f.candidates?.[0]?.content.parts ?? []);

describe("the Gemini face of the mock model", () => {
  test("a streamed reply: text in chunks, finishReason and the whole usage on the last frame", async () => {
    const response = await ask("say hello");
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const list = await frames(response);
    expect(list.length).toBeGreaterThan(1);
    expect(
      partsOf(list)
        .map((p) => p.text)
        .join(""),
    ).toBe("Hello from the mock model! 👋");
    expect(list.at(-1)!.candidates![0]!.finishReason).toBe("STOP");
    expect(list.at(-1)!.usageMetadata).toMatchObject({
      promptTokenCount: expect.any(Number),
      candidatesTokenCount: 8,
    });
    expect(list[0]!.usageMetadata!.candidatesTokenCount).toBeUndefined();
    expect(mock.requests()[0]).toMatchObject({
      face: "gemini",
      kind: "main",
      prompt: "say hello",
      model: "gemini-2.5-flash",
    });
  });

  test("the script's turns in the CLI's tool names: a shell command, a write, a question", async () => {
    const call = async (prompt: string) =>
      partsOf(await frames(await ask(prompt))).find((p) => p.functionCall)?.functionCall as Record<
        string,
        unknown
      >;
    expect(await call("run cmd: touch x.txt")).toEqual({
      name: "run_shell_command",
      args: { command: "touch x.txt", description: "Run the requested command" },
    });
    expect(await call("edit file")).toEqual({
      name: "write_file",
      args: { file_path: "/work/project/hello.txt", content: "hello from the mock\n" },
    });
    const question = await call("ask me");
    expect(question.name).toBe("ask_user");
    expect((question.args as { questions: Array<Record<string, unknown>> }).questions[0]).toMatchObject({
      question: "Which color should the button be?",
      header: "Color",
      type: "choice",
    });
  });

  test("a tool's result, read back in neutral words: the turn's next step", async () => {
    const list = await frames(
      await generate([
        { role: "user", parts: [{ text: CONTEXT }, { text: "run cmd: echo hi" }] },
        {
          role: "model",
          parts: [{ functionCall: { id: "c1", name: "run_shell_command", args: { command: "echo hi" } } }],
        },
        {
          role: "user",
          parts: [{ functionResponse: { id: "c1", name: "run_shell_command", response: { output: "hi" } } }],
        },
      ]),
    );
    expect(
      partsOf(list)
        .map((p) => p.text)
        .join(""),
    ).toBe("Command finished:\n\nhi");
    expect(mock.requests()[0]).toMatchObject({
      round: 1,
      prompt: "run cmd: echo hi",
      tools: expect.arrayContaining(["Bash", "Write"]),
    });
  });

  test("errors as Google's error body; a stream that breaks off; a hang aborted by the client", async () => {
    const limited = await ask("rate limit");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await limited.json()).error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
    expect((await ask("overloaded")).status).toBe(503);
    const broken = await frames(await ask("stream error"));
    expect(broken.at(-1)!.error).toMatchObject({ code: 503 });
    expect(broken.some((f) => f.candidates?.[0]?.finishReason)).toBe(false);
    const abort = new AbortController();
    const hung = ask("hang forever", { signal: abort.signal }).catch((e: Error) => e.name);
    await Bun.sleep(100);
    abort.abort();
    expect(await hung).toBe("AbortError");
    await Bun.sleep(100);
    expect(mock.requests().at(-1)?.status).toBe("aborted");
  });

  test("slow N streams for about N seconds", async () => {
    const started = Date.now();
    await frames(await ask("slow 1"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  test("the CLI's session summary (no tools, not streamed) is answered as a title", async () => {
    const summary =
      "Summarize the user's primary intent or goal in this conversation in ONE sentence (max 80 characters).\n\n" +
      `Conversation:\nUser: ${CONTEXT}\n\nUser: fix the login bug please\n\nAssistant: OK\n\nSummary (max 80 chars):`;
    const response = await generate([{ role: "user", parts: [{ text: summary }] }], {
      stream: false,
      tools: [],
    });
    const body = await response.json();
    expect(body.candidates[0].content.parts[0].text).toBe("Mock: fix the login bug please");
    expect(mock.requests()[0]).toMatchObject({ kind: "side", rule: "side-default" });
  });

  test("count tokens and the model list", async () => {
    const counted = await fetch(`${mock.url}/v1beta/models/gemini-2.5-flash:countTokens`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x".repeat(400) }] }] }),
    });
    expect((await counted.json()).totalTokens).toBeGreaterThan(100);
    const models = await (await fetch(`${mock.url}/v1beta/models`)).json();
    expect(models.models.map((m: { name: string }) => m.name)).toContain("models/gemini-2.5-flash");
  });
});
