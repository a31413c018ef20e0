import { defineCommand } from "citty";
import type { FleetView } from "../../fleet/index.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { connect } from "../connect.ts";
import { formatAge, printJson, printNote, printTable } from "../output.ts";

/** `ag fleet`: GET /v1/fleet as a table — the hosts, their leases and headroom (docs/fleet.md). */
export default defineCommand({
  meta: { name: "fleet", description: "The fleet's hosts: online or not, lease, memory headroom, sessions" },
  args: {
    ...GLOBAL_ARGS,
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { client } = connect(args);
    const fleet = await client.get<FleetView>("/v1/fleet");
    if (args.json) return printJson(fleet);
    const now = Date.now();
    printTable(
      ["HOST", "ONLINE", "HEARTBEAT", "HEADROOM", "RUNNING", "SESSIONS", "URL"],
      fleet.hosts.map((h) => [
        h.self ? `${h.name} (this)` : h.name,
        h.online ? "yes" : "no",
        `${formatAge(Math.max(0, now - Date.parse(h.heartbeatAt)) / 1000)} ago`,
        h.headroomMb === null ? "?" : `${h.headroomMb} MB`,
        String(h.running),
        String(h.sessions),
        h.url,
      ]),
    );
    if (!fleet.connected)
      printNote(`the fleet database does not answer (${fleet.error}): this is the last known fleet`);
  },
});
