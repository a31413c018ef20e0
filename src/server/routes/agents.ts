import { Elysia, t } from "elysia";
import { AGENT_CAPABILITIES, type AgentRegistry } from "../../agents/index.ts";
import { PERMISSION_MODES } from "../../agents/vocabulary.ts";
import { literalUnion } from "../../shared/schema.ts";

const AgentProbe = t.Object({
  at: t.String({ format: "date-time" }),
  flags: t.Record(t.String(), t.Boolean(), {
    description: "each flag ag launches it with, and whether its --help lists it",
  }),
  missingFlags: t.Array(t.String()),
  acp: t.Boolean({ description: "its ACP entry point is there (driver acp)" }),
  hooks: t.Boolean({ description: "it has hooks and none of the flags that set them up is missing" }),
});

const AgentInfo = t.Object({
  id: t.String({ description: "what a session's `agent` names" }),
  name: t.String(),
  installed: t.Boolean({ description: "its CLI answers its version flag on this machine" }),
  version: t.Union([t.String(), t.Null()]),
  verifiedVersions: t.Array(t.String(), {
    description: "the CLI versions its adapter is verified on; any other runs, reported verified: false",
  }),
  verified: t.Union([t.Boolean(), t.Null()], {
    description: "whether the installed version is one of verifiedVersions; null when it is not installed",
  }),
  probe: t.Union([AgentProbe, t.Null()], {
    description: "what its --help said when ag probed it (at start); null until probed, or not installed",
  }),
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
      summary:
        "Every agent CLI ag can run: installed or not, its version and whether it is verified, what its help said, drivers and capabilities",
      tags: ["agents"],
    },
  });
}
