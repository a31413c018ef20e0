import { Elysia } from "elysia";
import { MetricsReport, type MetricsService, PROMETHEUS_CONTENT_TYPE } from "../../metrics/index.ts";

/** Server-wide metrics: JSON for people and scripts, the Prometheus text format for scrapers. */
export function metricsRoutes(metrics: MetricsService) {
  return new Elysia({ name: "routes/metrics" })
    .get("/v1/metrics", () => metrics.report(), {
      response: MetricsReport,
      detail: {
        summary:
          "Sessions by state, tokens (each agent message once), estimated cost, prompt deliveries and latencies",
      },
    })
    .get(
      "/metrics",
      async ({ set }) => {
        const text = await metrics.prometheus();
        set.headers["content-type"] = PROMETHEUS_CONTENT_TYPE;
        return text;
      },
      {
        detail: {
          summary:
            "The same metrics in the Prometheus text format 0.0.4 (text/plain), latencies as histograms",
          // `getMetrics` is GET /v1/metrics's.
          operationId: "getMetricsPrometheus",
          responses: {
            200: {
              description: "Prometheus text format 0.0.4",
              content: { [PROMETHEUS_CONTENT_TYPE]: { schema: { type: "string" as const } } },
            },
          },
        },
      },
    );
}
