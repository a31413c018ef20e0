import { defineCommand } from "citty";
import type { DriverName } from "../../agents/agent.ts";
import type { Health } from "../../health/service.ts";
import type { Session } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { readLiveInstance, stopLiveInstance } from "../../store/instance.ts";
import { GLOBAL_ARGS } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect, isLocalServer } from "../connect.ts";
import { plural, printLine, printNote } from "../output.ts";

/**
 * `ag stop`: the server shuts down gracefully (SIGTERM, as Ctrl+C would: requests drain, the
 * state is closed). There is no HTTP route for it: only someone on the server's machine, as its
 * user, can stop it — the pid comes from `<stateDir>/server.json`. The agents' tmux windows
 * are left running, and the next start picks them up again; headless agents (ag's children)
 * end with it and are reopened at the next start.
 */
export default defineCommand({
  meta: { name: "stop", description: "Stop the running ag server; terminal agents keep running" },
  args: { ...GLOBAL_ARGS },
  async run({ args }) {
    const { loaded, client } = connect(args, { timeoutMs: () => 2_000 });
    const { stateDir, shutdownHardMs } = loaded.config;
    const live = readLiveInstance(stateDir);
    const answering = await client.get<Health>("/v1/health").catch(() => null);
    if (!live) {
      if (answering) {
        const where = isLocalServer(loaded, client.baseUrl)
          ? `with another state directory than ${stateDir}`
          : "on another machine";
        throw new AgError(
          "CONFLICT",
          `the ag server at ${client.baseUrl} runs ${where}: stop it where it runs (or with SVC_STATE_DIR set as it has it)`,
        );
      }
      printLine(`no ag server runs for ${stateDir}`);
      return;
    }
    const url = new URL(client.baseUrl);
    if (
      live.port !== undefined &&
      String(live.port) !== (url.port || "80") &&
      isLocalServer(loaded, client.baseUrl)
    ) {
      throw new AgError(
        "CONFLICT",
        `the ag server of ${stateDir} (pid ${live.pid}) listens on port ${live.port}, not at ${client.baseUrl}: leave --port out to stop it`,
      );
    }
    const running = answering ? await runningByDriver(client, answering.sessions.active) : null;
    const stopped = await stopLiveInstance(stateDir, { timeoutMs: shutdownHardMs + 5_000 });
    if (stopped?.outcome === "timeout") {
      throw new AgError(
        "INTERNAL_ERROR",
        `the ag server (pid ${live.pid}) did not stop within ${Math.round((shutdownHardMs + 5_000) / 1000)} s; see ${stateDir}/server.log`,
      );
    }
    printLine(`stopped the ag server (pid ${live.pid})`);
    if (running) for (const note of stopNotes(running)) printNote(note);
  },
});

/** The server's running sessions by where their agents run (a key that may not list: all as tmux's). */
async function runningByDriver(client: ApiClient, active: number): Promise<Record<DriverName, number>> {
  const listed = await client.get<Session[]>("/v1/sessions?status=running").catch(() => null);
  if (!listed) return { tmux: active, acp: 0 };
  return {
    tmux: listed.filter((s) => s.driver === "tmux").length,
    acp: listed.filter((s) => s.driver === "acp").length,
  };
}

/**
 * What becomes of the running sessions: a terminal agent keeps running in its tmux window; a
 * headless one was ag's child and is ended with it, its conversation reopened at the next start.
 */
export function stopNotes(running: Record<DriverName, number>): string[] {
  const notes: string[] = [];
  const { tmux, acp } = running;
  if (tmux > 0)
    notes.push(
      `${plural(tmux, "agent session")} ${tmux === 1 ? "keeps" : "keep"} running in tmux; the next start (ag, or ag run) picks ${tmux === 1 ? "it" : "them"} up`,
    );
  if (acp > 0)
    notes.push(
      `${plural(acp, "headless session")} (driver acp): ${acp === 1 ? "its agent was" : "their agents were"} ended with the server; the next start reopens ${acp === 1 ? "its conversation" : "their conversations"} where the agent can (docs/drivers.md, Restart)`,
    );
  return notes;
}
