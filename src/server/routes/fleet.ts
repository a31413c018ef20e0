import { Elysia } from "elysia";
import { type Fleet, FleetView } from "../../fleet/index.ts";
import { AgError } from "../../shared/errors.ts";

/** GET /v1/fleet: the hosts, their leases and headroom (docs/fleet.md); 404 outside a fleet. */
export function fleetRoutes(fleet: Pick<Fleet, "view"> | null) {
  return new Elysia({ name: "routes/fleet" }).get(
    "/v1/fleet",
    () => {
      if (!fleet)
        throw new AgError("FEATURE_DISABLED", "this ag is not in a fleet (fleet.databaseUrl is not set)");
      return fleet.view();
    },
    {
      response: FleetView,
      detail: {
        summary: "The fleet: every host with its lease, admission headroom and session count",
        tags: ["sessions"],
      },
    },
  );
}
