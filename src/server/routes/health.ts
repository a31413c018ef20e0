import { Elysia } from "elysia";
import { Health, type HealthService } from "../../health/service.ts";

export function healthRoutes(health: HealthService) {
  return new Elysia({ name: "routes/health" }).get("/v1/health", () => health.check(), {
    response: Health,
    detail: { summary: "Server health, with a live tmux probe", tags: ["health"] },
  });
}
