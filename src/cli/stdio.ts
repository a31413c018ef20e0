import { type LoadedConfig, loadConfig } from "../config/load.ts";
import { createLogger, type Logger } from "../shared/log.ts";
import { activeIds } from "../telemetry/index.ts";

/**
 * The config and logger of a command whose stdout carries JSON-RPC and nothing else (`ag mcp`,
 * `ag acp`): every log line, the config's warnings first, goes to stderr.
 */
export function stdioCommandSetup(configPath: string | undefined): { loaded: LoadedConfig; logger: Logger } {
  const loaded = loadConfig({ configPath });
  const logger = createLogger({
    level: loaded.config.logLevel,
    json: loaded.config.jsonLogs,
    stream: process.stderr,
    traceIds: activeIds,
  });
  for (const warning of loaded.warnings) logger.warn(warning);
  return { loaded, logger };
}
