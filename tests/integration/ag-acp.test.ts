import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { acpAgentContract } from "../contract/acp-agent.contract.ts";
import { connectEditor, type Editor, initialize } from "../helpers/acp-editor.ts";
import { freePort } from "../helpers/binary.ts";
import { atRunEnd } from "../helpers/cleanup.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { isAlive } from "../helpers/stream.ts";
import { tempDir } from "../helpers/temp.ts";
import { privateSocket } from "../helpers/tmux.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * `ag acp` (bun src/main.ts acp) as a process an editor launches, driven by the official SDK's
 * client side, against ag's real runtime (SQLite file, HTTP on port 0) whose sessions run the fake
 * ACP agent (tests/fakes/acp-agent.ts: the Gemini adapter's ACP entry runs a template's
 * agentCommand in place of `gemini`). First `ag acp` is held to the ACP agent contract every ACP
 * agent ag drives meets; then what only ag adds: choices before launch, permissions answered
 * elsewhere, usage, list and load.
 */
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const home = tempDir("ag-acp-editor-home-");
const workDir = tempDir("ag-acp-editor-work-");
const fakeCommand = [process.execPath, FAKE, "--state", tempDir("ag-acp-editor-fake-")].join(" ");

let world: Promise<{ ag: TestRuntime; templateId: string }> | null = null;
function startWorld() {
  world ??= (async () => {
    const ag = await startTestRuntime({}, { home });
    const template = await callApi<Json>(ag, "POST", "/v1/templates", {
      name: "fake-acp",
      agent: "gemini",
      driver: "acp",
      agentCommand: fakeCommand,
      workDir,
    });
    expect(template.status).toBe(201);
    return { ag, templateId: template.body.id as string };
  })();
  return world;
}
afterAll(async () => {
  if (!world) return;
  const { ag } = await world;
  await ag.drain(100);
  ag.close();
});

async function agAcp(...flags: string[]) {
  const { ag, templateId } = await startWorld();
  return {
    command: [
      process.execPath,
      MAIN,
      "acp",
      "--port",
      new URL(ag.url).port,
      "--template",
      templateId,
      ...flags,
    ],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SVC_STATE_DIR: ag.stateDir },
    cwd: workDir,
  };
}

acpAgentContract({
  name: "ag acp, its sessions on the fake ACP agent",
  start: () => agAcp(),
  hello: { prompt: "say hello", reply: "Hello from the fake agent!" },
  permission: "write file contract.txt",
  slow: "slow",
  turnMs: 30_000,
});

describe("ag acp: what ag adds to an ACP agent", () => {
  let editor: Editor;
  let ag: TestRuntime;
  const api = (method: string, path: string, body?: unknown) => callApi<Json>(ag, method, path, body);
  const newSession = () =>
    editor.request<acp.NewSessionResponse>("session/new", { cwd: workDir, mcpServers: [] });
  const agIdOf = (response: acp.PromptResponse) => (response._meta as Json).ag.sessionId as string;

  beforeAll(async () => {
    ag = (await startWorld()).ag;
    editor = connectEditor(await agAcp());
    const init = await initialize(editor);
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {} } });
  }, 60_000);
  afterAll(() => editor?.stop());

  test("modes and config options choose the session's launch; once it runs they are fixed", async () => {
    const created = await newSession();
    expect(created.modes?.currentModeId).toBe("default");
    expect(created.configOptions?.map((o) => [o.id, o.currentValue])).toEqual([
      ["agent", "gemini"],
      ["driver", "acp"],
      ["mode", "default"],
      ["model", "default"],
    ]);
    const model = created.configOptions!.find((o) => o.id === "model") as {
      options: acp.SessionConfigSelectOption[];
    };
    const tier = model.options[1]!.value;
    const set = await editor.request<acp.SetSessionConfigOptionResponse>("session/set_config_option", {
      sessionId: created.sessionId,
      configId: "model",
      value: tier,
    });
    expect(set.configOptions.find((o) => o.id === "model")?.currentValue).toBe(tier);
    const refused = await editor
      .request("session/set_config_option", {
        sessionId: created.sessionId,
        configId: "driver",
        value: "nope",
      })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(acp.RequestError);

    const response = await editor.prompt(created.sessionId, "say hello");
    expect(response.stopReason).toBe("end_turn");
    const session = (await api("GET", `/v1/sessions/${agIdOf(response)}`)).body;
    expect(session).toMatchObject({ agent: "gemini", driver: "acp", model: tier, workDir });

    const fixed = await editor
      .request<never>("session/set_mode", { sessionId: created.sessionId, modeId: "plan" })
      .catch((error: unknown) => error as acp.RequestError);
    expect(fixed).toBeInstanceOf(acp.RequestError);
    expect(fixed.code).toBe(-32600);
    expect(fixed.data).toMatchObject({ code: "CONFLICT", statusCode: 409 });
  }, 60_000);

  test("a turn streams its thought and reply, and ends with ag's usage priced", async () => {
    const { sessionId } = await newSession();
    const from = editor.updates.length;
    const response = await editor.prompt(sessionId, "say hello");
    expect(response.stopReason).toBe("end_turn");
    const kinds = editor.updates.slice(from).map((n) => n.update.sessionUpdate);
    // The editor's own prompt is not echoed back; the ag session running the turn is named first.
    expect(kinds).toEqual([
      "session_info_update",
      "agent_thought_chunk",
      "agent_message_chunk",
      "usage_update",
    ]);
    const info = editor.updates[from]!.update as acp.SessionInfoUpdate;
    expect(info._meta).toMatchObject({ ag: { sessionId: agIdOf(response) } });
    expect(editor.said(sessionId, from)).toBe("Hello from the fake agent!");
    const usage = editor.updates.at(-1)!.update as acp.UsageUpdate & { sessionUpdate: "usage_update" };
    const metrics = (await api("GET", `/v1/sessions/${agIdOf(response)}/metrics`)).body;
    const { input, output, cacheRead, cacheCreation } = metrics.tokens;
    expect(input + output).toBeGreaterThan(0);
    expect(usage.used).toBe(input + output + cacheRead + cacheCreation);
    expect(usage.cost).toEqual({ amount: metrics.estimatedCost.usd, currency: "USD" });
  }, 60_000);

  test("a permission approved in the editor: the agent's options, the tool call completed, the file written", async () => {
    const { sessionId } = await newSession();
    editor.answer = "allow_once";
    const asked = editor.permissions.length;
    const response = await editor.prompt(sessionId, "write file editor.txt");
    expect(response.stopReason).toBe("end_turn");
    const { request } = editor.permissions[asked]!;
    expect(request.options.map((o) => [o.name, o.kind])).toEqual([
      ["Allow", "allow_once"],
      ["Always allow", "allow_always"],
      ["Reject", "reject_once"],
    ]);
    expect(readFileSync(join(workDir, "editor.txt"), "utf8")).toBe("written by the fake agent\n");
    const call = editor.updates
      .map((n) => n.update)
      .filter((u) => "toolCallId" in u && u.toolCallId === request.toolCall.toolCallId);
    expect(call.map((u) => [u.sessionUpdate, "status" in u ? u.status : null])).toEqual([
      ["tool_call", "in_progress"],
      ["tool_call_update", "completed"],
    ]);
  }, 60_000);

  test("a permission approved through the REST API while the editor is asked: the editor's request is withdrawn", async () => {
    const { sessionId } = await newSession();
    editor.answer = "hold";
    const asked = editor.permissions.length;
    const turn = editor.prompt(sessionId, "write file rest.txt");
    await until(() => editor.permissions.length > asked, 20_000);
    const response = await Promise.race([turn, Bun.sleep(0).then(() => null)]);
    expect(response).toBeNull();
    const sessions = (await api("GET", "/v1/sessions?status=permission_prompt")).body as Json[];
    const waiting = sessions.find((s) => s.workDir === workDir)!;
    expect(
      (
        await api("POST", `/v1/sessions/${waiting.id}/approve`, {
          permissionId: waiting.pendingPermission.id,
        })
      ).status,
    ).toBe(200);
    expect((await turn).stopReason).toBe("end_turn");
    expect(editor.permissions[asked]!.withdrawn).toBe(true);
    expect(existsSync(join(workDir, "rest.txt"))).toBe(true);
    editor.answer = "allow_once";
  }, 60_000);

  test("session/list and session/load: a session started elsewhere, its history replayed, a new turn followed live", async () => {
    const created = await api("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      agentCommand: fakeCommand,
      workDir,
      prompt: "say hello",
      reuse: false,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until(async () => (await api("GET", `/v1/sessions/${id}`)).body.status === "idle", 20_000);

    const listed = await editor.request<acp.ListSessionsResponse>("session/list", { cwd: workDir });
    expect(listed.sessions.find((s) => s.sessionId === id)).toMatchObject({ cwd: workDir });

    const from = editor.updates.length;
    const loaded = await editor.request<acp.LoadSessionResponse>("session/load", {
      sessionId: id,
      cwd: workDir,
      mcpServers: [],
    });
    expect(loaded.modes?.currentModeId).toBeDefined();
    const replayed = editor.updates
      .slice(from)
      .filter((n) => n.sessionId === id)
      .map((n) => n.update);
    expect(replayed.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "agent_thought_chunk",
      "agent_message_chunk",
    ]);
    expect(editor.said(id, from)).toBe("Hello from the fake agent!");

    // A turn someone else starts (the REST API, the phone) streams to the editor as it happens.
    const live = editor.updates.length;
    expect((await api("POST", `/v1/sessions/${id}/send`, { text: "recall" })).body.delivered).toBe(true);
    await until(() => editor.said(id, live).includes("I remember: say hello"), 20_000);
    await until(async () => (await api("GET", `/v1/sessions/${id}`)).body.status === "idle", 20_000);

    // And the editor prompts the loaded session itself.
    const response = await editor.prompt(id, "say hello");
    expect(response.stopReason).toBe("end_turn");
    expect(agIdOf(response)).toBe(id);
  }, 60_000);

  test("an unknown session to load is ACP's resource-not-found, with ag's code", async () => {
    const error = await editor
      .request<never>("session/load", { sessionId: "no-such-session", cwd: workDir, mcpServers: [] })
      .catch((e: unknown) => e as acp.RequestError);
    expect(error).toBeInstanceOf(acp.RequestError);
    expect(error.code).toBe(-32002);
    expect(error.data).toMatchObject({ code: "SESSION_NOT_FOUND", statusCode: 404 });
  }, 30_000);
});

describe("ag acp with no server running", () => {
  test("starts one in the background as ag run does, then serves the editor from it", async () => {
    const machine = tempDir("ag-acp-alone-");
    const stateDir = join(machine, ".svc");
    const port = freePort();
    const editor = connectEditor({
      command: [process.execPath, MAIN, "acp"],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: machine,
        SVC_STATE_DIR: stateDir,
        SVC_PORT: String(port),
        SVC_HOST: "127.0.0.1",
        SVC_TMUX_SOCKET: privateSocket(),
      },
      cwd: machine,
    });
    const serverJson = join(stateDir, "server.json");
    try {
      // The editor's first request waits in the pipe while ag acp starts the server.
      expect((await initialize(editor)).agentInfo?.name).toBe("ag");
      const { pid } = JSON.parse(readFileSync(serverJson, "utf8")) as { pid: number };
      atRunEnd(() => {
        if (isAlive(pid)) process.kill(pid, "SIGKILL");
      });
      expect(isAlive(pid)).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
      const listed = await editor.request<acp.ListSessionsResponse>("session/list", {});
      expect(listed.sessions).toEqual([]);
      // It wrote the project's starter config first, as ag run does (every setting commented out).
      expect(existsSync(join(machine, ".svc", "config.yaml"))).toBe(true);
    } finally {
      await editor.stop();
      const pid = existsSync(serverJson)
        ? (JSON.parse(readFileSync(serverJson, "utf8")) as { pid: number }).pid
        : 0;
      if (pid && isAlive(pid)) {
        process.kill(pid, "SIGTERM");
        await until(() => !isAlive(pid), 15_000);
      }
    }
  }, 60_000);
});
