#!/usr/bin/env bun
/**
 * A tiny, deterministic ACP agent for tests: `bun tests/fakes/acp-agent.ts [--no-load | --load-fails] [--load-gate FILE] [--acp-usage] [--state DIR]`
 * (other arguments, such as the `--acp --approval-mode <mode>` of the Gemini entry or the `acp`
 * of OpenCode's, are ignored).
 * Built on the official SDK's agent side (`acp.agent()` over `ndJsonStream` on stdin/stdout).
 *
 * What it understands in a prompt (its text, trimmed):
 * - `say hello`: a thought, then "Hello from the fake agent!" streamed in two chunks.
 * - `write file NAME`: a tool call (kind edit), then `session/request_permission` with the options
 *   allow_once / allow_always / reject_once; allowed, it writes NAME in its cwd ("written by the
 *   fake agent\n") and the call completes; rejected, the call fails and nothing is written;
 *   cancelled, the turn ends `cancelled`.
 * - `slow`: a chunk every 50 ms until `session/cancel` (stopReason `cancelled`), at most 60 s.
 * - `pause MS`: waits MS milliseconds (as a model call does), then replies "paused MS ms".
 * - `die`: writes "fake agent: dying as asked" to stderr and exits with status 3.
 * - `recall`: "I remember: <the earlier prompts of this session, joined by ' | '>" (what it keeps
 *   per session, so a reopened session shows it kept its context).
 * - `serve`: starts tests/fakes/dev-server.ts as its child (in its cwd) and replies "serving <pid>
 *   <port>"; `serve detached`: the same through a shell that exits at once, so the server is
 *   re-parented to init (as a dev server an agent's Bash tool started in the background).
 * - `mcp TOOL`: starts the first MCP server `session/new` (or `session/load`) offered over stdio,
 *   calls its tool TOOL with no arguments (the official MCP SDK's client) and replies "mcp TOOL: <the
 *   tool's text>", or "no MCP server was offered".
 * - anything else: "You said: <text>".
 * Every prompt response carries its tokens in `_meta.quota` as Gemini CLI 0.61.0 does (input = the
 * prompt's length, output = the reply's length, model `fake-model`); with `--acp-usage`, in ACP's
 * own `usage` instead (as OpenCode does: the same counts, 7 cached input tokens read, 2 thought
 * tokens), with the model `fake/acp-model` named by a config option of `session/new`.
 *
 * It advertises `loadSession` (not with `--no-load`; with `--load-fails` it does, but its
 * `session/load` answers an error, as Gemini CLI 0.61.0 does for an earlier process's session): every update it sends is also appended to
 * `<state>/<sessionId>.jsonl` (the prompts as `user_message_chunk`), and `session/load` replays
 * that file as `session/update` notifications before it answers. An unknown session id is an error.
 * With `--load-gate FILE`, `session/load` starts only once FILE exists: a test holds an agent
 * in the middle of its reopening for as long as it looks. With `--replay-late` it answers
 * `session/load` first and replays the history 50 ms after (as Gemini CLI 0.61.0 does when it
 * finds the conversation); with `--replay-slow` it answers first and replays one update every 150 ms
 * (a long history still streaming when the next prompt could be sent).
 * `--stderr-lines N` writes N numbered lines to stderr as it starts ("fake agent: stderr line i");
 * `--exit-at-start` then exits with status 2 before reading its stdin (an agent that cannot start).
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const args = process.argv.slice(2);
const canLoad = !args.includes("--no-load");
const loadFails = args.includes("--load-fails");
const gateAt = args.indexOf("--load-gate");
const loadGate = gateAt >= 0 ? args[gateAt + 1] : undefined;
const acpUsage = args.includes("--acp-usage");
const replayLate = args.includes("--replay-late");
const replaySlow = args.includes("--replay-slow");
const linesAt = args.indexOf("--stderr-lines");
const stderrLines = linesAt >= 0 ? Number(args[linesAt + 1]) : 0;
for (let i = 1; i <= stderrLines; i++) process.stderr.write(`fake agent: stderr line ${i}\n`);
if (args.includes("--exit-at-start")) process.exit(2);
const stateAt = args.indexOf("--state");
const stateDir = (stateAt >= 0 && args[stateAt + 1]) || join(tmpdir(), "ag-fake-acp");
mkdirSync(stateDir, { recursive: true });

interface FakeSession {
  cwd: string;
  /** What session/new or session/load offered. */
  mcpServers: acp.McpServer[];
  prompts: string[];
  /** The turn in flight: session/cancel aborts it. */
  turn: AbortController | null;
}
const sessions = new Map<string, FakeSession>();
const historyFile = (sessionId: string) => join(stateDir, `${sessionId}.jsonl`);

function session(sessionId: string): FakeSession {
  const found = sessions.get(sessionId);
  if (!found) throw acp.RequestError.sessionNotFound(sessionId);
  return found;
}

const app = acp.agent({ name: "fake-acp-agent" });
let client: acp.AgentContext;

async function send(sessionId: string, update: acp.SessionUpdate): Promise<void> {
  appendFileSync(historyFile(sessionId), `${JSON.stringify(update)}\n`);
  await client.notify("session/update", { sessionId, update });
}

const text = (t: string): acp.ContentBlock => ({ type: "text", text: t });

async function writeFile(sessionId: string, s: FakeSession, name: string, signal: AbortSignal) {
  const toolCallId = `write-${s.prompts.length}`;
  const path = resolve(s.cwd, name);
  await send(sessionId, {
    sessionUpdate: "tool_call",
    toolCallId,
    title: `Write ${name}`,
    kind: "edit",
    status: "pending",
    rawInput: { path, content: "written by the fake agent\n" },
  });
  const answer = await client.request(
    "session/request_permission",
    {
      sessionId,
      toolCall: { toolCallId, title: `Write ${name}`, kind: "edit", rawInput: { path } },
      options: [
        { optionId: "fake-allow", name: "Allow", kind: "allow_once" },
        { optionId: "fake-always", name: "Always allow", kind: "allow_always" },
        { optionId: "fake-reject", name: "Reject", kind: "reject_once" },
      ],
    },
    { cancellationSignal: signal },
  );
  if (answer.outcome.outcome === "cancelled" || signal.aborted)
    return { stop: "cancelled" as const, reply: "" };
  if (answer.outcome.optionId === "fake-reject") {
    await send(sessionId, {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "failed",
      content: [{ type: "content", content: text("rejected by the user") }],
    });
    return { stop: "end_turn" as const, reply: `I did not write ${name}.` };
  }
  writeFileSync(path, "written by the fake agent\n");
  await send(sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: [{ type: "content", content: text(`wrote ${name} (${answer.outcome.optionId})`) }],
  });
  return { stop: "end_turn" as const, reply: `I wrote ${name}.` };
}

/** A dev server of this agent's: its own child, or (detached) an orphan that kept the environment. */
async function serve(s: FakeSession, detached: boolean): Promise<string> {
  const server = [process.execPath, join(import.meta.dir, "dev-server.ts")];
  const argv = detached ? ["bash", "-c", `${server.join(" ")} &`] : server;
  const child = Bun.spawn(argv, { cwd: s.cwd, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  const reader = child.stdout.getReader();
  let line = "";
  while (!line.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    line += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return `serving ${line.trim()}`;
}

/** Calls a tool of the first stdio MCP server the client offered, as an agent would. */
async function callMcp(s: FakeSession, tool: string): Promise<string> {
  const server = s.mcpServers.find((m): m is acp.McpServerStdio => "command" in m);
  if (!server) return "no MCP server was offered";
  const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "", ...env },
    stderr: "ignore",
  });
  const mcpClient = new Client({ name: "fake-acp-agent", version: "1.0.0" });
  await mcpClient.connect(transport);
  try {
    const result = await mcpClient.callTool({ name: tool, arguments: {} });
    const content = result.content as Array<{ type: string; text?: string }>;
    return content.map((c) => c.text ?? "").join("\n");
  } finally {
    await mcpClient.close();
  }
}

async function slow(sessionId: string, signal: AbortSignal) {
  for (let i = 0; i < 1_200 && !signal.aborted; i++) {
    await send(sessionId, { sessionUpdate: "agent_message_chunk", content: text(`chunk ${i} `) });
    await Bun.sleep(50);
  }
  return { stop: signal.aborted ? ("cancelled" as const) : ("end_turn" as const), reply: "" };
}

async function turn(sessionId: string, s: FakeSession, prompt: string, signal: AbortSignal) {
  if (prompt === "die") {
    process.stderr.write("fake agent: dying as asked\n");
    process.exit(3);
  }
  if (prompt === "slow") return slow(sessionId, signal);
  const pause = /^pause (\d+)$/.exec(prompt);
  if (pause?.[1]) {
    await Bun.sleep(Number(pause[1]));
    return { stop: "end_turn" as const, reply: `paused ${pause[1]} ms` };
  }
  const write = /^write file (\S+)$/.exec(prompt);
  if (write?.[1]) return writeFile(sessionId, s, write[1], signal);
  if (prompt === "say hello") {
    await send(sessionId, {
      sessionUpdate: "agent_thought_chunk",
      content: text("A greeting is asked for."),
    });
    await send(sessionId, { sessionUpdate: "agent_message_chunk", content: text("Hello from ") });
    return { stop: "end_turn" as const, reply: "the fake agent!" };
  }
  if (prompt === "serve" || prompt === "serve detached")
    return { stop: "end_turn" as const, reply: await serve(s, prompt === "serve detached") };
  const mcp = /^mcp (\S+)$/.exec(prompt);
  if (mcp?.[1]) return { stop: "end_turn" as const, reply: `mcp ${mcp[1]}: ${await callMcp(s, mcp[1])}` };
  if (prompt === "recall")
    return { stop: "end_turn" as const, reply: `I remember: ${s.prompts.slice(0, -1).join(" | ")}` };
  return { stop: "end_turn" as const, reply: `You said: ${prompt}` };
}

app
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: canLoad },
    agentInfo: { name: "fake-acp-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest("session/new", ({ params }) => {
    const sessionId = crypto.randomUUID();
    sessions.set(sessionId, { cwd: params.cwd, mcpServers: params.mcpServers, prompts: [], turn: null });
    writeFileSync(historyFile(sessionId), "");
    if (!acpUsage) return { sessionId };
    const model = { value: "fake/acp-model", name: "Fake ACP model" };
    return {
      sessionId,
      configOptions: [
        {
          id: "model",
          name: "Model",
          category: "model",
          type: "select",
          currentValue: model.value,
          options: [model],
        },
      ],
    };
  })
  .onRequest("session/load", async ({ params }) => {
    if (!canLoad) throw acp.RequestError.methodNotFound("session/load");
    while (loadGate && !existsSync(loadGate)) await Bun.sleep(20);
    if (loadFails) {
      process.stderr.write("fake agent: no previous sessions found\n");
      throw acp.RequestError.internalError(undefined, "no previous sessions found (--load-fails)");
    }
    const file = historyFile(params.sessionId);
    if (!existsSync(file)) throw acp.RequestError.sessionNotFound(params.sessionId);
    const s: FakeSession = { cwd: params.cwd, mcpServers: params.mcpServers, prompts: [], turn: null };
    const history = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as acp.SessionUpdate);
    for (const update of history)
      if (update.sessionUpdate === "user_message_chunk" && update.content.type === "text")
        s.prompts.push(update.content.text);
    const replay = async () => {
      for (const update of history) {
        await client.notify("session/update", { sessionId: params.sessionId, update });
        if (replaySlow) await Bun.sleep(150);
      }
    };
    if (replayLate || replaySlow) setTimeout(() => void replay(), 50);
    else await replay();
    sessions.set(params.sessionId, s);
    return {};
  })
  .onRequest("session/prompt", async ({ params, signal }) => {
    const s = session(params.sessionId);
    const prompt = params.prompt
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("")
      .trim();
    s.prompts.push(prompt);
    // The turn can be cancelled from its first moment: a session/cancel right behind the prompt
    // ends it too (tests/contract/acp-agent.contract.ts).
    const controller = new AbortController();
    signal.addEventListener("abort", () => controller.abort());
    s.turn = controller;
    try {
      await send(params.sessionId, { sessionUpdate: "user_message_chunk", content: text(prompt) });
      const { stop, reply } = await turn(params.sessionId, s, prompt, controller.signal);
      if (reply) await send(params.sessionId, { sessionUpdate: "agent_message_chunk", content: text(reply) });
      if (acpUsage) {
        const [input, output] = [prompt.length, reply.length];
        const usage = { inputTokens: input, outputTokens: output, thoughtTokens: 2, cachedReadTokens: 7 };
        return { stopReason: stop, usage: { ...usage, totalTokens: input + output + 9 } };
      }
      return {
        stopReason: stop,
        _meta: {
          quota: {
            token_count: { input_tokens: prompt.length, output_tokens: reply.length },
            model_usage: [{ model: "fake-model" }],
          },
        },
      };
    } finally {
      s.turn = null;
    }
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.turn?.abort();
  });

const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
  ),
);
client = connection.client;
await connection.closed;
process.exit(0);
