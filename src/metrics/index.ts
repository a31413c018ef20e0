export { PROMETHEUS_CONTENT_TYPE } from "./prometheus.ts";
export { createMetricsRecorder, type MetricsRecorder } from "./recorder.ts";
export { MetricsReport } from "./report.ts";
export { createMetricsService, type MetricsService, type MetricsServiceDeps } from "./service.ts";
