import { defineCommand } from "citty";
import { loadConfig } from "../../config/load.ts";
import { startRuntime } from "../../runtime.ts";
import { createShutdown } from "../../server/shutdown.ts";
import { createLogger } from "../../shared/log.ts";
import { activeIds, startTracing } from "../../telemetry/index.ts";
import { VERSION } from "../../version.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";

export default defineCommand({
  meta: { name: "ag", version: VERSION, description: "Start the ag server (REST API, SSE, dashboard)" },
  args: {
    ...GLOBAL_ARGS,
    host: { type: "string", description: "Bind address", valueHint: "addr" },
    "json-logs": { type: "boolean", description: "Log one JSON object per line" },
  },
  async run({ args }) {
    const loaded = loadConfig({
      configPath: args.config,
      flags: { port: parsePortFlag(args.port), host: args.host, jsonLogs: args["json-logs"] || undefined },
    });
    const { config } = loaded;
    const logger = createLogger({ level: config.logLevel, json: config.jsonLogs, traceIds: activeIds });
    for (const warning of loaded.warnings) logger.warn(warning);

    // Before the runtime: what it does from its first request on is traced (when enabled).
    const tracing = await startTracing(config, logger);
    const runtime = await startRuntime({ config, logger });

    const shutdown = createShutdown({
      graceMs: config.shutdownGraceMs,
      hardMs: config.shutdownHardMs,
      drain: (graceMs) => runtime.drain(graceMs),
      async close() {
        runtime.close();
        await tracing.shutdown();
      },
      exit: (code) => process.exit(code),
      logger,
    });
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
    // Announced only once a signal would be handled: "listening" means ready to stop cleanly too.
    const dashboard = config.dashboardEnabled ? ` · dashboard ${runtime.url}/dashboard/` : "";
    logger.info(`ag ${VERSION} listening on ${runtime.url}${dashboard}`, {
      stateDir: config.stateDir,
      pid: process.pid,
    });
  },
});
