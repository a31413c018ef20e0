import { Elysia } from "elysia";
import { ModelTiers, RouteResult, type RouterService, RouteTaskInput } from "../../router/index.ts";

/** SPEC's model router: a suggestion of tier and model for a task; nothing is changed. */
export function routerRoutes(router: RouterService) {
  return new Elysia({ name: "routes/router" })
    .post("/v1/dev/route-task", ({ body }) => router.route(body), {
      body: RouteTaskInput,
      response: RouteResult,
      detail: {
        summary: "Suggest a model tier for a task from keywords in its title, labels and description",
        tags: ["router"],
      },
    })
    .get("/v1/dev/model-tiers", () => router.tiers(), {
      response: ModelTiers,
      detail: { summary: "The configured model and inclusive score range of each tier", tags: ["router"] },
    });
}
