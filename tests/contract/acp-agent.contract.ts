import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as acp from "@agentclientprotocol/sdk";
// The SDK checks what reaches a client (requests, notifications) with these schemas, but not the
// responses to the client's own requests: the contract checks those with the same schemas.
import * as schema from "../../node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";
import { childStream } from "../../src/drivers/acp/connection.ts";

/**
 * What every ACP agent ag drives must answer, as the official SDK's client side (`acp.client()`,
 * what src/drivers/acp/connection.ts is built on) sends and reads it: initialize, session/new,
 * a prompt's turn with its updates, session/request_permission answered, session/cancel. Run on
 * the fake ACP agent (tests/integration/acp-agent-contract.test.ts), so that it cannot drift from
 * the protocol, and on a real one (tests/e2e/acp-agent-contract.test.ts), so that what the fake
 * does is what real agents do.
 */
export interface AcpAgentUnderContract {
  /** Who: the describe's title. */
  name: string;
  /** Starts the agent (its command, environment, cwd): called once for the suite. */
  start(): Promise<{ command: string[]; env: Record<string, string>; cwd: string }>;
  /** A prompt whose turn ends with a reply containing `reply`. */
  hello: { prompt: string; reply: string };
  /** A prompt that asks for a permission (a tool) before its turn can end. */
  permission: string;
  /** A prompt whose turn goes on until it is cancelled. */
  slow: string;
  /** Ends what start() made (besides the agent, which the suite ends). */
  stop?(): Promise<void>;
  /** A turn's time limit (a real agent through the mock takes seconds). */
  turnMs: number;
}

interface Running {
  connection: acp.ClientConnection;
  child: ReturnType<typeof Bun.spawn>;
  updates: acp.SessionNotification[];
  /** Every session/update that did not match the schema (the SDK would drop it). */
  invalid: string[];
  permissions: acp.RequestPermissionRequest[];
  /** The option kind the next permission request is answered with. */
  answer: acp.PermissionOptionKind;
}

async function connect(spec: {
  command: string[];
  env: Record<string, string>;
  cwd: string;
}): Promise<Running> {
  const child = Bun.spawn(spec.command, {
    cwd: spec.cwd,
    env: spec.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  const running = {
    child,
    updates: [],
    invalid: [],
    permissions: [],
    answer: "allow_once",
  } as unknown as Running;
  const app = acp
    .client({ name: "ag-contract" })
    .onNotification("session/update", ({ params }) => {
      const checked = schema.zSessionNotification.safeParse(params);
      if (!checked.success) running.invalid.push(JSON.stringify(params).slice(0, 300));
      running.updates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      running.permissions.push(params);
      const option = params.options.find((o) => o.kind === running.answer) ?? params.options[0];
      const response: acp.RequestPermissionResponse = option
        ? { outcome: { outcome: "selected", optionId: option.optionId } }
        : { outcome: { outcome: "cancelled" } };
      expect(schema.zRequestPermissionResponse.safeParse(response).success).toBe(true);
      return response;
    });
  running.connection = app.connect(childStream(child));
  return running;
}

/** The text of the agent's message chunks since `from` (the index into the updates). */
function messageText(updates: acp.SessionNotification[], from: number): string {
  return updates
    .slice(from)
    .map((n) => n.update)
    .flatMap((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    )
    .join("");
}

export function acpAgentContract(agent: AcpAgentUnderContract): void {
  describe(`${agent.name}: the ACP agent contract`, () => {
    let running: Running;
    let cwd: string;
    let sessionId: string;
    const request = <T>(method: string, params: unknown) =>
      running.connection.agent.request(method as never, params as never) as Promise<T>;
    const prompt = (text: string) =>
      request<acp.PromptResponse>("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

    beforeAll(async () => {
      const spec = await agent.start();
      cwd = spec.cwd;
      running = await connect(spec);
    }, 120_000);
    afterAll(async () => {
      running?.connection.close();
      running?.child.kill();
      await running?.child.exited;
      await agent.stop?.();
    });

    test("initialize: the protocol version the SDK speaks, its capabilities", async () => {
      const init = await request<acp.InitializeResponse>("initialize", {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "ag-contract", version: "1" },
      });
      expect(schema.zInitializeResponse.parse(init)).toBeDefined();
      expect(init.protocolVersion).toBe(acp.PROTOCOL_VERSION);
      expect(typeof (init.agentCapabilities?.loadSession ?? false)).toBe("boolean");
    }, 60_000);

    test("session/new: a session id for the cwd", async () => {
      const created = await request<acp.NewSessionResponse>("session/new", { cwd, mcpServers: [] });
      expect(schema.zNewSessionResponse.parse(created)).toBeDefined();
      expect(created.sessionId.length).toBeGreaterThan(0);
      sessionId = created.sessionId;
    }, 60_000);

    test(
      "session/prompt: the reply streams as agent_message_chunk updates of the session; the turn ends end_turn",
      async () => {
        const from = running.updates.length;
        const response = await prompt(agent.hello.prompt);
        expect(schema.zPromptResponse.parse(response)).toBeDefined();
        expect(response.stopReason).toBe("end_turn");
        expect(messageText(running.updates, from)).toContain(agent.hello.reply);
        expect(running.updates.slice(from).every((n) => n.sessionId === sessionId)).toBe(true);
        expect(running.invalid).toEqual([]);
      },
      agent.turnMs,
    );

    test(
      "session/request_permission: a tool call's options, allow_once among them; answered, the turn ends end_turn",
      async () => {
        const asked = running.permissions.length;
        running.answer = "allow_once";
        const response = await prompt(agent.permission);
        expect(response.stopReason).toBe("end_turn");
        const permission = running.permissions[asked];
        expect(permission).toBeDefined();
        expect(schema.zRequestPermissionRequest.parse(permission)).toBeDefined();
        expect(permission!.sessionId).toBe(sessionId);
        expect(permission!.toolCall.toolCallId.length).toBeGreaterThan(0);
        const kinds = permission!.options.map((o) => o.kind);
        expect(kinds).toContain("allow_once");
        expect(kinds).toContain("reject_once");
        // The tool call is told as an update of the session too.
        const calls = running.updates.flatMap((n) =>
          n.update.sessionUpdate === "tool_call" || n.update.sessionUpdate === "tool_call_update"
            ? [n.update.toolCallId]
            : [],
        );
        expect(calls).toContain(permission!.toolCall.toolCallId);
        expect(running.invalid).toEqual([]);
      },
      agent.turnMs,
    );

    test(
      "session/cancel mid-turn: the prompt answers stopReason cancelled",
      async () => {
        const from = running.updates.length;
        const turn = prompt(agent.slow);
        // Cancelled once the turn is under way: the agent has said something of it.
        for (const deadline = Date.now() + agent.turnMs; running.updates.length === from; ) {
          if (Date.now() > deadline) throw new Error("the slow turn sent no update");
          await Bun.sleep(50);
        }
        await running.connection.agent.notify("session/cancel", { sessionId });
        const response = await turn;
        expect(schema.zPromptResponse.parse(response)).toBeDefined();
        expect(response.stopReason).toBe("cancelled");
      },
      agent.turnMs,
    );

    test(
      "session/cancel right behind the prompt (before any update): the prompt answers cancelled",
      async () => {
        const turn = prompt(agent.slow);
        await running.connection.agent.notify("session/cancel", { sessionId });
        expect((await turn).stopReason).toBe("cancelled");
      },
      agent.turnMs,
    );

    test(
      "the session answers another prompt after the cancel",
      async () => {
        const from = running.updates.length;
        const response = await prompt(agent.hello.prompt);
        expect(response.stopReason).toBe("end_turn");
        expect(messageText(running.updates, from)).toContain(agent.hello.reply);
      },
      agent.turnMs,
    );

    test(
      "an unknown session id is an error, not a turn",
      async () => {
        const answered = await request("session/prompt", {
          sessionId: "no-such-session",
          prompt: [{ type: "text", text: agent.hello.prompt }],
        }).then(
          () => "answered",
          (error) => error,
        );
        expect(answered).toBeInstanceOf(acp.RequestError);
      },
      agent.turnMs,
    );
  });
}
