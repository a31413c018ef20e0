import { Elysia } from "elysia";
import { Health, type HealthService } from "../../health/service.ts";

/** `auth` says whether a client must bring a credential, so a page asks for one before it sends a request. */
export function healthRoutes(health: HealthService, auth: Health["auth"]) {
  return new Elysia({ name: "routes/health" }).get(
    "/v1/health",
    async (): Promise<Health> => ({ ...(await health.check()), auth }),
    {
      response: Health,
      detail: { summary: "Server health, with a live tmux probe", tags: ["health"] },
    },
  );
}
