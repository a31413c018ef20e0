import { defineCommand } from "citty";
import type { AgentInfo } from "../../agents/index.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printTable } from "../output.ts";

/** `ag agents`: GET /v1/agents as a table. */
export default defineCommand({
  meta: { name: "agents", description: "The agent CLIs ag can run: installed or not, version, capabilities" },
  args: {
    ...GLOBAL_ARGS,
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { client } = connect(args);
    const agents = await client.get<AgentInfo[]>("/v1/agents");
    if (args.json) return printJson(agents);
    printTable(
      ["AGENT", "NAME", "VERSION", "VERIFIED", "DRIVERS", "CAN", "PERMISSION MODES"],
      agents.map((a) => [
        a.default ? `${a.id} (default)` : a.id,
        a.name,
        a.installed ? (a.version ?? "?") : `not installed: npm install -g ${a.package}`,
        verifiedColumn(a),
        a.drivers.join(", "),
        a.capabilities.join(", "),
        a.permissionModes.join(", "),
      ]),
    );
  },
});

/** yes / no / ? (not installed), and the flags its help lacks, if any. */
export function verifiedColumn(a: Pick<AgentInfo, "verified" | "probe">): string {
  const verified = a.verified === null ? "?" : a.verified ? "yes" : "no";
  const missing = a.probe?.missingFlags ?? [];
  return missing.length ? `${verified} (lacks ${missing.join(", ")})` : verified;
}
