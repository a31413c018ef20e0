import { defineCommand } from "citty";
import { currentAuthToken, loadConfig } from "../../config/load.ts";
import type { Health } from "../../health/service.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient, resolveServerUrl } from "../client.ts";
import { formatDuration, printFields, printJson, printLine } from "../output.ts";

export default defineCommand({
  meta: {
    name: "status",
    description: "Version, status, uptime, port and session counts of the running server",
  },
  args: {
    ...GLOBAL_ARGS,
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const loaded = loadConfig({ configPath: args.config });
    const baseUrl = resolveServerUrl(loaded, parsePortFlag(args.port));
    const client = createApiClient({ baseUrl, token: currentAuthToken(loaded.config) });
    const health = await client.get<Health>("/v1/health");
    const port = Number(new URL(baseUrl).port || 80);
    if (args.json) {
      printJson({ ...health, url: baseUrl, port });
      return;
    }
    printLine(`ag ${health.version} — ${health.status}`);
    printFields([
      ["url", baseUrl],
      ["port", String(port)],
      ["uptime", formatDuration(health.uptime)],
      ["sessions", `${health.sessions.active} active / ${health.sessions.total} total`],
      ["tmux", health.tmux.healthy ? "healthy" : `unhealthy: ${health.tmux.error}`],
    ]);
  },
});
