import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../shared/schema.ts";
import { AGENT_CAPABILITIES } from "./agent.ts";
import { DRIVER_NAMES, PERMISSION_MODES } from "./vocabulary.ts";

/** One agent as `GET /v1/agents` (and MCP's `list_agents`) shows it (CONTRACT §10). */

const AgentProbeSchema = Type.Object({
  at: Type.String({ format: "date-time" }),
  flags: Type.Record(Type.String(), Type.Boolean(), {
    description: "each flag ag launches it with, and whether its --help lists it",
  }),
  missingFlags: Type.Array(Type.String()),
  acp: Type.Boolean({ description: "its ACP entry point is there (driver acp)" }),
  hooks: Type.Boolean({ description: "it has hooks and none of the flags that set them up is missing" }),
});

export const AgentInfo = Type.Object({
  id: Type.String({ description: "what a session's `agent` names" }),
  name: Type.String(),
  installed: Type.Boolean({ description: "its CLI answers its version flag on this machine" }),
  version: Type.Union([Type.String(), Type.Null()]),
  verifiedVersions: Type.Array(Type.String(), {
    description: "the CLI versions its adapter is verified on; any other runs, reported verified: false",
  }),
  verified: Type.Union([Type.Boolean(), Type.Null()], {
    description: "whether the installed version is one of verifiedVersions; null when it is not installed",
  }),
  probe: Type.Union([AgentProbeSchema, Type.Null()], {
    description: "what its --help said when ag probed it (at start); null until probed, or not installed",
  }),
  drivers: Type.Array(literalUnion(DRIVER_NAMES)),
  capabilities: Type.Array(literalUnion(AGENT_CAPABILITIES)),
  permissionModes: Type.Array(literalUnion(PERMISSION_MODES), {
    description: "the neutral permission modes it has an equivalent of",
  }),
  command: Type.String({ description: "the program ag runs" }),
  package: Type.String({ description: "the npm package that installs it" }),
  default: Type.Boolean({ description: "sessions that name no agent run this one" }),
});
export type AgentInfo = Static<typeof AgentInfo>;
