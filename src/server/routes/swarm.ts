import { Elysia } from "elysia";
import { Swarm, type SwarmService } from "../../swarm/index.ts";

/** The parallel-session swarm: sessions as a tree, and every agent process on the system. */
export function swarmRoutes(swarm: SwarmService) {
  return new Elysia({ name: "routes/swarm" }).get("/v1/swarm", () => swarm.snapshot(), {
    response: Swarm,
    detail: {
      summary: "Sessions by parent, agent CLI processes found on the system (managed or not), and counts",
      tags: ["swarm"],
    },
  });
}
