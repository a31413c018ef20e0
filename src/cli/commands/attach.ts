import { join } from "node:path";
import { defineCommand } from "citty";
import { readDesktopEnv } from "../../config/load.ts";
import { assertTerminal, isTerminal, type Session } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { attachTerminal, paneSessionTag } from "../../tmux/attach.ts";
import { handle } from "../answers.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { type Connection, connect, isLocalServer } from "../connect.ts";
import { canAsk } from "../keys.ts";
import { printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";

interface PaneHealth {
  pane: { windowId: string; paneId: string } | null;
}

/**
 * The person's terminal on the session's own tmux pane, on ag's private tmux server (the
 * socket of SVC_TMUX_SOCKET). Returns when they detach; the agent keeps running.
 */
export async function attachSession(
  connection: Connection,
  session: Session,
  readOnly: boolean,
): Promise<void> {
  const { loaded, client } = connection;
  assertTerminal(session, "ag attach");
  if (!isLocalServer(loaded, client.baseUrl)) {
    throw new AgError(
      "USAGE_ERROR",
      `the ag server at ${client.baseUrl} runs on another machine: its agents' terminals are there (ssh to it and run ag attach ${handle(session)}, or open the dashboard)`,
    );
  }
  if (isTerminal(session.status))
    throw new AgError(
      "CONFLICT",
      `${session.name} has ended (${session.status}): there is no terminal to attach to; ag read ${handle(session)} shows its conversation`,
    );
  // A hibernated session's agent is started again first (docs/hibernation.md): then it has a pane.
  if (session.hibernated) await client.send("POST", sessionPath(session.id, "wake"));
  const { pane } = await client.get<PaneHealth>(sessionPath(session.id, "health"));
  if (!pane) throw new AgError("CONFLICT", `${session.name} has no live tmux pane (${session.status})`);
  if (!Bun.which("tmux")) throw new AgError("TMUX_UNAVAILABLE", "tmux is not on PATH: ag attach runs it");
  const socket = loaded.config.tmuxSocket;
  const desktop = readDesktopEnv();
  const ours = join(desktop.tmuxTmpDir, `tmux-${process.getuid?.() ?? 0}`, socket);
  if (desktop.tmuxSocketPath === ours) {
    throw new AgError(
      "USAGE_ERROR",
      `this shell runs inside ag's own tmux server: switch to ${session.name}'s window there (Ctrl+B w)`,
    );
  }
  // The pane must be the session's on the socket this CLI knows: a server started with another
  // SVC_TMUX_SOCKET keeps its agents elsewhere, and pane ids are only unique per tmux server.
  const tag = await paneSessionTag(socket, pane.paneId);
  if (tag !== session.id) {
    throw new AgError(
      "TMUX_UNAVAILABLE",
      `${session.name}'s pane ${pane.paneId} is not on ag's tmux server "${socket}" here; does the server run with another SVC_TMUX_SOCKET?`,
    );
  }
  printNote(
    `attaching to ${session.name}${readOnly ? " (read-only)" : ""} · detach with Ctrl+B d; the agent keeps running`,
  );
  const code = await attachTerminal({ socket, paneId: pane.paneId, readOnly });
  if (code !== 0) throw new AgError("TMUX_UNAVAILABLE", `tmux attach ended with code ${code}`);
}

/** `ag attach <session>`: watch (--read-only) or drive the agent's own terminal UI. */
export default defineCommand({
  meta: {
    name: "attach",
    description: "Attach this terminal to the session's tmux window (Ctrl+B d detaches)",
  },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    "read-only": { type: "boolean", description: "Watch only: no key reaches the agent", alias: ["r"] },
  },
  async run({ args }) {
    const connection = connect(args);
    const session = await resolveSession(connection.client, args.session);
    // A headless session has no terminal anywhere: said first, whatever this shell is.
    assertTerminal(session, "ag attach");
    if (!canAsk()) {
      throw new AgError(
        "USAGE_ERROR",
        "ag attach needs a terminal (stdin and stdout are not one here); to read a session use ag read or ag tail",
      );
    }
    await attachSession(connection, session, args["read-only"] === true);
    printNote(`detached from ${session.name}; it keeps running`);
  },
});
