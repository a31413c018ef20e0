import { randomBytes } from "node:crypto";
import { declaredEnvironment } from "../../shared/environment.ts";
import { AgError } from "../../shared/errors.ts";
import { asUser, type RunAs } from "../../shared/run-as.ts";

/**
 * Forks an OpenCode conversation before the session's UI starts. The UI's own `--fork` first
 * shows its home screen (an input box, ready) for about a second while it copies the
 * conversation: a prompt typed then would start a new, empty conversation instead. So the copy
 * is made by a short-lived headless OpenCode (`opencode serve`, its HTTP API's fork), and the UI
 * starts straight in it with `-s <copy>`. The server runs without plugins (ag's would call ag
 * back), on loopback, behind a password of its own, and is gone before the UI starts.
 */

const READY_TIMEOUT_MS = 30_000;
const FORK_TIMEOUT_MS = 30_000;

export async function forkConversation(options: {
  program: string;
  conversationId: string;
  workDir: string;
  env: Record<string, string>;
  /** The OS user the session's agent runs as (its conversations are that user's). */
  runAs?: RunAs | null;
}): Promise<string> {
  const password = randomBytes(16).toString("hex");
  let server: ReturnType<typeof Bun.spawn> | null = null;
  try {
    const { command, env } = asUser(
      options.runAs ?? null,
      [options.program, "serve", "--port", "0", "--hostname", "127.0.0.1", "--pure"],
      { ...declaredEnvironment(), ...options.env, OPENCODE_SERVER_PASSWORD: password },
    );
    server = Bun.spawn(command, {
      cwd: options.workDir,
      env,
      stdout: "pipe",
      stderr: "ignore",
    });
    const url = await listening(server.stdout as ReadableStream<Uint8Array>, READY_TIMEOUT_MS);
    const path = `/session/${encodeURIComponent(options.conversationId)}/fork`;
    const response = await fetch(`${url}${path}?directory=${encodeURIComponent(options.workDir)}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`,
      },
      body: "{}",
      signal: AbortSignal.timeout(FORK_TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => ({}))) as { id?: unknown };
    if (!response.ok || typeof body.id !== "string")
      throw new Error(`OpenCode answered ${response.status} to the fork of ${options.conversationId}`);
    return body.id;
  } catch (error) {
    throw new AgError(
      "AGENT_UNAVAILABLE",
      `could not fork the OpenCode conversation: ${(error as Error).message}`,
    );
  } finally {
    if (server) await stop(server);
  }
}

async function stop(server: ReturnType<typeof Bun.spawn>): Promise<void> {
  server.kill("SIGTERM");
  const exited = await Promise.race([server.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
  if (!exited) server.kill("SIGKILL");
}

/** The server's URL, from its "opencode server listening on http://…" line. */
async function listening(stdout: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const reader = stdout.getReader();
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`opencode serve did not start: ${text.trim().slice(-300)}`);
      text += decoder.decode(value, { stream: true });
      const url = text.match(/listening on (http:\/\/[^\s]+)/)?.[1];
      if (url) return url.replace(/\/+$/, "");
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}
