import { defineCommand } from "citty";
import { agentAdapters } from "../../agents/index.ts";
import { currentAuthToken, loadConfig } from "../../config/load.ts";
import type { Health } from "../../health/service.ts";
import { doctorPassed, runDoctor, type ServerHealth } from "../../init/doctor.ts";
import type { Session, UntrackedAgent } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { programHelp, programVersion } from "../../shared/program.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { type ApiClient, createApiClient, resolveServerUrl } from "../client.ts";
import { printJson, printLine, printNote } from "../output.ts";

const MARK = { ok: "✓", warn: "✗", fail: "✗" } as const;

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check starter files, tmux, the agent CLIs, the config and the server",
  },
  args: {
    ...GLOBAL_ARGS,
    json: { type: "boolean", description: "Machine-readable output" },
    "end-untracked": {
      type: "boolean",
      description: "End the agents running in ag's tmux windows without a record (a lost state database)",
    },
    "adopt-untracked": {
      type: "boolean",
      description:
        "Adopt the agents running in ag's tmux windows without a record: each becomes a session again",
    },
  },
  async run({ args }) {
    const port = parsePortFlag(args.port);
    const checks = await runDoctor({
      cwd: process.cwd(),
      loadConfig: () => loadConfig({ configPath: args.config }),
      version: programVersion,
      help: (command) => programHelp(command),
      agents: agentAdapters(),
      async health(loaded): Promise<ServerHealth> {
        const url = resolveServerUrl(loaded, port);
        const client = createApiClient({
          baseUrl: url,
          token: currentAuthToken(loaded.config),
          timeoutMs: 3000,
        });
        const health = await client.get<Health>("/v1/health");
        let untracked = await listUntracked(client);
        if (untracked && args["adopt-untracked"]) {
          for (const id of new Set(untracked.map((a) => a.sessionId)))
            await adoptUntracked(client, id, !args.json);
          untracked = await listUntracked(client);
        }
        if (untracked && args["end-untracked"]) {
          for (const id of new Set(untracked.map((a) => a.sessionId))) {
            await client.send("DELETE", `/v1/untracked/${encodeURIComponent(id)}`);
            if (!args.json) printLine(`ended untracked agent ${id}`);
          }
          untracked = await listUntracked(client);
        }
        return {
          url,
          version: health.version,
          status: health.status,
          storage: health.storage,
          ...(untracked ? { untracked: [...new Set(untracked.map((a) => a.sessionId))] } : {}),
        };
      },
    });
    const passed = doctorPassed(checks);
    if (args.json) printJson({ ok: passed, checks });
    else {
      for (const c of checks) {
        printLine(`${MARK[c.status]} ${c.name}: ${c.status === "warn" ? "warning: " : ""}${c.detail}`);
      }
    }
    if (!passed) {
      const failed = checks.filter((c) => c.status === "fail");
      const s = failed.length === 1 ? "" : "s";
      throw new AgError(failed[0]!.code ?? "INTERNAL_ERROR", `${failed.length} check${s} failed`);
    }
  },
});

/**
 * Adopts one untracked agent. One that cannot be adopted (no agent CLI ag knows runs there, its
 * agent exited) is said on stderr with its code and stays listed: the others are adopted still.
 */
async function adoptUntracked(client: ApiClient, id: string, say: boolean): Promise<void> {
  try {
    const { session, warnings } = await client.send<{ session: Session; warnings: string[] }>(
      "POST",
      `/v1/untracked/${encodeURIComponent(id)}/adopt`,
      {},
    );
    if (!say) return;
    printLine(
      `adopted untracked agent ${id} as session ${session.name} (${session.agent}, ${session.workDir})`,
    );
    for (const warning of warnings) printNote(`warning: ${warning}`);
  } catch (error) {
    if (!(error instanceof AgError) || !["CONFLICT", "NOT_FOUND", "UNKNOWN_AGENT"].includes(error.code))
      throw error;
    printNote(`could not adopt untracked agent ${id}: ${error.message} [${error.code}]`);
  }
}

/**
 * The untracked agents, or undefined when this credential may not list them (an admin's route)
 * or the server is older than the route.
 */
async function listUntracked(client: ApiClient): Promise<UntrackedAgent[] | undefined> {
  try {
    return (await client.get<{ agents: UntrackedAgent[] }>("/v1/untracked")).agents;
  } catch (error) {
    // Not this key's to see, a server from before the route, or its tmux not up (nothing of
    // ag's runs there then; the tmux check says why): no answer, not a failed server.
    const unknown = ["FORBIDDEN", "UNAUTHORIZED", "NOT_FOUND", "TMUX_UNAVAILABLE"];
    if (error instanceof AgError && unknown.includes(error.code)) return undefined;
    throw error;
  }
}
