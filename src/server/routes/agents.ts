import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { AgentInfo, type AgentRegistry } from "../../agents/index.ts";

/** The agents ag can run (CONTRACT §10). */
export function agentRoutes(agents: Pick<AgentRegistry, "describe">) {
  return new Elysia({ name: "routes/agents" }).get("/v1/agents", () => agents.describe(), {
    response: Type.Array(AgentInfo),
    detail: {
      summary:
        "Every agent CLI ag can run: installed or not, its version and whether it is verified, what its help said, drivers and capabilities",
      tags: ["agents"],
    },
  });
}
