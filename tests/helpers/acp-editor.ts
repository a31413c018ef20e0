import * as acp from "@agentclientprotocol/sdk";
import { childStream } from "../../src/drivers/acp/connection.ts";

/**
 * An editor as the official SDK's client side makes one (`acp.client()`), connected to an ACP
 * agent process (`ag acp`) over its stdin/stdout: every `session/update` it is sent, every
 * `session/request_permission` it is asked, answered as the test says.
 */
export interface Editor {
  connection: acp.ClientConnection;
  child: ReturnType<typeof Bun.spawn>;
  updates: acp.SessionNotification[];
  permissions: Array<{ request: acp.RequestPermissionRequest; withdrawn: boolean }>;
  /**
   * How the next permission requests are answered: an option kind (picked at once), or "hold":
   * not answered until the agent withdraws the request ($/cancel_request).
   */
  answer: acp.PermissionOptionKind | "hold";
  request<T>(method: string, params: unknown): Promise<T>;
  prompt(sessionId: string, text: string): Promise<acp.PromptResponse>;
  /** The text of the agent's message chunks of `sessionId` since update `from`. */
  said(sessionId: string, from?: number): string;
  stop(): Promise<void>;
}

export function connectEditor(spec: { command: string[]; env: Record<string, string>; cwd: string }): Editor {
  const child = Bun.spawn(spec.command, {
    cwd: spec.cwd,
    env: spec.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const editor = { child, updates: [], permissions: [], answer: "allow_once" } as unknown as Editor;
  const app = acp
    .client({ name: "test-editor" })
    .onNotification("session/update", ({ params }) => {
      editor.updates.push(params);
    })
    .onRequest("session/request_permission", async ({ params, signal }) => {
      const asked = { request: params, withdrawn: false };
      editor.permissions.push(asked);
      if (editor.answer === "hold") {
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        asked.withdrawn = true;
        return { outcome: { outcome: "cancelled" } };
      }
      const option = params.options.find((o) => o.kind === editor.answer) ?? params.options[0]!;
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  editor.connection = app.connect(childStream(child));
  editor.request = <T>(method: string, params: unknown) =>
    editor.connection.agent.request(method as never, params as never) as Promise<T>;
  editor.prompt = (sessionId, text) =>
    editor.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  editor.said = (sessionId, from = 0) =>
    editor.updates
      .slice(from)
      .filter((n) => n.sessionId === sessionId)
      .map((n) => n.update)
      .flatMap((u) =>
        u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
      )
      .join("");
  editor.stop = async () => {
    editor.connection.close();
    child.kill();
    await child.exited;
  };
  return editor;
}

export async function initialize(editor: Editor): Promise<acp.InitializeResponse> {
  return editor.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "test-editor", version: "1" },
  });
}
