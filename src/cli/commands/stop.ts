import { defineCommand } from "citty";
import type { Health } from "../../health/service.ts";
import { AgError } from "../../shared/errors.ts";
import { readLiveInstance, stopLiveInstance } from "../../store/instance.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { connect, isLocalServer } from "../connect.ts";
import { plural, printLine, printNote } from "../output.ts";

/**
 * `ag stop`: the server shuts down gracefully (SIGTERM, as Ctrl+C would: requests drain, the
 * state is closed). There is no HTTP route for it: only someone on the server's machine, as its
 * user, can stop it — the pid comes from `<stateDir>/server.json`. The agents' tmux windows
 * are left running, and the next start picks them up again.
 */
export default defineCommand({
  meta: { name: "stop", description: "Stop the running ag server; the agents keep running" },
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
    const agents = answering?.sessions.active ?? 0;
    const stopped = await stopLiveInstance(stateDir, { timeoutMs: shutdownHardMs + 5_000 });
    if (stopped?.outcome === "timeout") {
      throw new AgError(
        "INTERNAL_ERROR",
        `the ag server (pid ${live.pid}) did not stop within ${Math.round((shutdownHardMs + 5_000) / 1000)} s; see ${stateDir}/server.log`,
      );
    }
    printLine(`stopped the ag server (pid ${live.pid})`);
    if (agents > 0) {
      const keep = agents === 1 ? "keeps" : "keep";
      printNote(
        `${plural(agents, "agent session")} ${keep} running in tmux; the next start (ag, or ag run) picks ${agents === 1 ? "it" : "them"} up`,
      );
    }
  },
});
