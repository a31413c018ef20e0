import * as acp from "@agentclientprotocol/sdk";
import { inSpan } from "../../telemetry/index.ts";

/**
 * One ACP agent as a child process of ag: its stdin/stdout carry the protocol (newline-delimited
 * JSON-RPC, framed by the official SDK), its stderr is kept (a tail) for diagnostics. Every
 * request ag makes is an `acp.json_rpc.request` span; the spawn is `acp.child_process.spawn`.
 */

export interface AcpHandlers {
  update(notification: acp.SessionNotification): void;
  permission(
    request: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<acp.RequestPermissionResponse>;
}

export interface AcpConnection {
  readonly pid: number;
  readonly capabilities: acp.AgentCapabilities;
  newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse>;
  loadSession(params: acp.LoadSessionRequest): Promise<acp.LoadSessionResponse>;
  setMode(params: acp.SetSessionModeRequest): Promise<unknown>;
  /** `session/set_model` (unstable in ACP v1; Zed's Claude Code adapter has it): any model id. */
  setModel(params: { sessionId: string; modelId: string }): Promise<unknown>;
  prompt(params: acp.PromptRequest): Promise<acp.PromptResponse>;
  cancel(sessionId: string): Promise<void>;
  /** The child's exit status (null: killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The last lines the child wrote to stderr. */
  stderrTail(): string;
  /** Ends the connection, the child and its process group (SIGTERM, then SIGKILL after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

export interface SpawnSpec {
  command: string[];
  env: Record<string, string>;
  cwd: string;
  /** Told the child's pid the moment it exists (before the protocol's first answer). */
  onSpawn?(pid: number): void;
}

/** How much of the child's stderr is kept (its tail): what a failure's cause can carry. */
const STDERR_KEEP = 16 * 1024;
const STDERR_DRAIN_MS = 200;

/** A child process's stdin/stdout as one ACP stream (newline-delimited JSON-RPC, each write flushed). */
export function childStream(child: {
  stdin: Bun.FileSink;
  stdout: ReadableStream<Uint8Array>;
}): ReturnType<typeof acp.ndJsonStream> {
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      child.stdin.write(chunk);
      await child.stdin.flush();
    },
    close() {
      void child.stdin.end();
    },
  });
  return acp.ndJsonStream(output, child.stdout);
}

export async function openAcpConnection(spec: SpawnSpec, handlers: AcpHandlers): Promise<AcpConnection> {
  const child = await inSpan(
    "acp.child_process.spawn",
    { "process.command": spec.command[0] ?? "", "process.command_args": spec.command.slice(1).join(" ") },
    async (span) => {
      const proc = Bun.spawn(spec.command, {
        cwd: spec.cwd,
        env: spec.env,
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        // Its own process group, so that whatever it starts (an adapter's agent) ends with it.
        detached: true,
      });
      span.setAttribute("process.pid", proc.pid);
      spec.onSpawn?.(proc.pid);
      return proc;
    },
  );
  let stderr = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_KEEP);
    }
  })().catch(() => {});
  // Its exit can be seen before its last stderr is read: the exit waits for it (a grandchild
  // holding stderr open does not hold the exit up for long).
  const exited = child.exited.then(async (code) => {
    await Promise.race([reading, Bun.sleep(STDERR_DRAIN_MS)]);
    return child.signalCode ? null : code;
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  const groupAlive = () => {
    try {
      process.kill(-child.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stream = childStream(child);
  const app = acp
    .client({ name: "ag" })
    .onNotification("session/update", ({ params }) => handlers.update(params))
    .onRequest("session/request_permission", ({ params, signal }) => handlers.permission(params, signal));
  const connection = app.connect(stream);
  const traced = <T>(method: string, work: () => Promise<T>) =>
    inSpan("acp.json_rpc.request", { "rpc.system": "jsonrpc", "rpc.method": method }, work);
  // A child that dies before answering must not leave a request waiting forever.
  void exited.then((code) => connection.close(new Error(`the agent exited (status ${code ?? "signal"})`)));

  /**
   * A start-up request the agent did not live to answer: its end closes the connection before
   * its exit is seen, so the exit is waited for (briefly) and told, with what it wrote to stderr.
   */
  const starting = <T>(method: string, request: () => Promise<T>) =>
    traced(method, () =>
      Promise.race([
        request().catch(async (error) => {
          const code = await Promise.race([
            exited,
            Bun.sleep(2 * STDERR_DRAIN_MS).then(() => "alive" as const),
          ]);
          throw code === "alive" ? error : died(method, code);
        }),
        exited.then((code) => {
          throw died(method, code);
        }),
      ]),
    );
  const died = (method: string, code: number | null) =>
    new Error(`the agent exited during ${method} (status ${code ?? "signal"}): ${stderr.trim()}`);

  const init = await starting("initialize", () =>
    connection.agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      // ag offers no file system and no terminal: the agent uses its own.
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "ag", version: "1" },
    }),
  );

  return {
    pid: child.pid,
    capabilities: init.agentCapabilities ?? {},
    newSession: (params) => starting("session/new", () => connection.agent.request("session/new", params)),
    loadSession: (params) => traced("session/load", () => connection.agent.request("session/load", params)),
    setMode: (params) =>
      traced("session/set_mode", () => connection.agent.request("session/set_mode", params)),
    setModel: (params) =>
      traced("session/set_model", () =>
        // Not in this SDK's typed method list (it has session/set_config_option instead).
        connection.agent.request("session/set_model" as "session/set_mode", params as never),
      ),
    prompt: (params) => traced("session/prompt", () => connection.agent.request("session/prompt", params)),
    cancel: (sessionId) => connection.agent.notify("session/cancel", { sessionId }),
    exited,
    stderrTail: () => stderr,
    async close(graceMs = 2_000) {
      connection.close();
      // The whole group: an adapter's agent must not outlive it (Claude Code under claude-code-acp
      // was once seen left running, orphaned, after ag stopped while a permission waited).
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await child.exited;
      for (const deadline = Date.now() + graceMs; groupAlive() && Date.now() < deadline; )
        await Bun.sleep(50);
      clearTimeout(timer);
      if (groupAlive()) signalGroup("SIGKILL");
    },
  };
}
