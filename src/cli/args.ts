import type { ArgsDef } from "citty";
import { AgError } from "../shared/errors.ts";

/** Flags every command accepts, so `ag --port 9200 status` and `ag status --port=9200` both work. */
export const GLOBAL_ARGS = {
  port: { type: "string", description: "Port of the ag server", valueHint: "number" },
  config: {
    type: "string",
    description: "Config file (beats ./svc.config.json and ~/.svc/config.json)",
    valueHint: "path",
  },
  debug: { type: "boolean", description: "Print stack traces with errors" },
} as const satisfies ArgsDef;

export function parsePortFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new AgError("USAGE_ERROR", `--port expects a number from 0 to 65535, got "${value}"`);
  }
  return Number(value);
}
