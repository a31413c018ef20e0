import { attachArgv, tmuxArgv } from "./argv.ts";

/**
 * A person's own terminal on ag's private tmux server (`ag attach`). ag's server talks to tmux
 * through its control-mode client; this is the other kind of client: a real terminal, handed
 * to tmux for as long as the person stays. Detaching ends only this client: the pane, its agent
 * and ag's own client go on.
 */

/** The session tag (`@svc_session_id`) of a pane on ag's socket; null when the pane or server is not there. */
export async function paneSessionTag(
  socket: string,
  paneId: string,
  binary = "tmux",
): Promise<string | null> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(tmuxArgv(binary, socket, "display-message", "-p", "-t", paneId, "#{@svc_session_id}"), {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
  } catch {
    return null;
  }
  const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout as ReadableStream).text()]);
  return code === 0 ? out.trim() : null;
}

/**
 * Runs `tmux attach` in this terminal and resolves with its exit code once the person detaches.
 * `$TMUX` is dropped: run from inside another tmux server (the person's own), tmux would refuse
 * to nest, yet ag's server is a different one.
 */
export async function attachTerminal(options: {
  socket: string;
  paneId: string;
  readOnly: boolean;
  binary?: string;
  env?: Record<string, string | undefined>;
}): Promise<number> {
  const { TMUX: _inside, ...env } = options.env ?? process.env;
  const proc = Bun.spawn(
    attachArgv(options.binary ?? "tmux", options.socket, options.paneId, options.readOnly),
    {
      stdio: ["inherit", "inherit", "inherit"],
      env,
    },
  );
  return proc.exited;
}
