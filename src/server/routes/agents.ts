import { Elysia, t } from "elysia";
import { AGENT_CAPABILITIES, type AgentRegistry } from "../../agents/index.ts";
import { PERMISSION_MODES } from "../../agents/vocabulary.ts";
import { literalUnion } from "../../shared/schema.ts";

const AgentInfo = t.Object({
  id: t.String({ description: "what a session's `agent` names" }),
  name: t.String(),
  installed: t.Boolean({ description: "its CLI answers its version flag on this machine" }),
  version: t.Union([t.String(), t.Null()]),
  drivers: t.Array(literalUnion(["tmux", "acp"] as const)),
  capabilities: t.Array(literalUnion(AGENT_CAPABILITIES)),
  permissionModes: t.Array(literalUnion(PERMISSION_MODES), {
    description: "the neutral permission modes it has an equivalent of",
  }),
  command: t.String({ description: "the program ag runs" }),
  package: t.String({ description: "the npm package that installs it" }),
  default: t.Boolean({ description: "sessions that name no agent run this one" }),
});

/** The agents ag can run (CONTRACT §10). */
export function agentRoutes(agents: Pick<AgentRegistry, "describe">) {
  return new Elysia({ name: "routes/agents" }).get("/v1/agents", () => agents.describe(), {
    response: t.Array(AgentInfo),
    detail: {
      summary: "Every agent CLI ag can run: installed or not, its version, drivers and capabilities",
      tags: ["agents"],
    },
  });
}
