import { expect, test } from "bun:test";
import { createLogger } from "../../src/shared/log.ts";
import { activeIds, inSpan, startTracing, tracingEnabled } from "../../src/telemetry/index.ts";
import { tracesUrl } from "../../src/telemetry/sdk.ts";

test("the OTLP endpoint is a collector's base URL; /v1/traces is added unless it is there", () => {
  expect(tracesUrl("http://localhost:4318")).toBe("http://localhost:4318/v1/traces");
  expect(tracesUrl("http://localhost:4318/")).toBe("http://localhost:4318/v1/traces");
  expect(tracesUrl("https://otel.example/otlp")).toBe("https://otel.example/otlp/v1/traces");
  expect(tracesUrl("http://c:4318/v1/traces")).toBe("http://c:4318/v1/traces");
});

test("tracing off: nothing is started, work runs untraced and log lines carry no ids", async () => {
  const logger = createLogger({ level: "silent", json: true });
  const tracing = await startTracing(
    { otelEnabled: false, otelOtlpEndpoint: "http://127.0.0.1:1", otelServiceName: "ag", otelSampleRate: 1 },
    logger,
  );
  expect(tracing.enabled).toBe(false);
  expect(tracingEnabled()).toBe(false);
  const seen = await inSpan("session.create", {}, async (span) => {
    expect(span.isRecording()).toBe(false);
    return activeIds();
  });
  expect(seen).toBeNull();
  await tracing.shutdown();
});
