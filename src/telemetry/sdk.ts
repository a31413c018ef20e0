import { hostname } from "node:os";
import { context, type DiagLogger, DiagLogLevel, diag, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type ExportResult, ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { Logger } from "../shared/log.ts";
import { VERSION } from "../version.ts";
import type { TracingSettings, TracingStats } from "./settings.ts";

/**
 * The OpenTelemetry SDK, loaded only when tracing is enabled (index.ts imports this file
 * dynamically): a tracer provider whose spans go, in batches, to an OTLP/HTTP collector.
 */

/** Spans waiting for export at most; past it new spans are dropped (and counted), never queued. */
export const MAX_QUEUE = 2048;
const BATCH = 512;
const EXPORT_EVERY_MS = 2_000;
/** One export (one HTTP request to the collector) gives up after this. */
const EXPORT_TIMEOUT_MS = 5_000;
/** Shutdown flushes for at most this long: a dead collector must not hold up ag's exit. */
const SHUTDOWN_FLUSH_MS = 3_000;
/** Failures are logged at most this often (a collector that is down fails every batch). */
const WARN_EVERY_MS = 60_000;

/**
 * OTLP/HTTP's traces path. The setting is a collector's base URL (`http://host:4318`, as
 * OTEL_EXPORTER_OTLP_ENDPOINT), to which `/v1/traces` is added; a URL that already ends in
 * `/v1/traces` is used as it is.
 */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith("/v1/traces")) url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/traces`;
  return url.toString();
}

export function startSdk(settings: TracingSettings, logger: Logger) {
  const stats: TracingStats = { exported: 0, failed: 0, dropped: 0 };
  let lastWarning = 0;
  const warn = (text: string) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    logger.warn(`tracing: ${text} (so far: ${stats.failed} span(s) not exported, ${stats.dropped} dropped)`);
  };
  diag.setLogger(diagnostics(stats, logger, warn), DiagLogLevel.WARN);

  const url = tracesUrl(settings.otelOtlpEndpoint);
  const exporter = counting(new OTLPTraceExporter({ url, timeoutMillis: EXPORT_TIMEOUT_MS }), stats, warn);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": settings.otelServiceName,
      "service.version": VERSION,
      "host.name": hostname(),
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.otelSampleRate) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: MAX_QUEUE,
        maxExportBatchSize: BATCH,
        scheduledDelayMillis: EXPORT_EVERY_MS,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  logger.info(`tracing to ${url} (sample rate ${settings.otelSampleRate})`);

  return {
    stats: () => ({ ...stats }),
    async shutdown() {
      const flushed = provider.shutdown().then(() => true);
      const timedOut = Bun.sleep(SHUTDOWN_FLUSH_MS).then(() => false);
      if (!(await Promise.race([flushed, timedOut])))
        logger.warn(`tracing: spans not flushed within ${SHUTDOWN_FLUSH_MS} ms`);
      if (stats.failed || stats.dropped)
        logger.warn(`tracing: ${stats.failed} span(s) not exported, ${stats.dropped} dropped`);
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

/** The exporter, counting what it exports and what it fails to. */
function counting(exporter: SpanExporter, stats: TracingStats, warn: (text: string) => void): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) stats.exported += spans.length;
        else {
          stats.failed += spans.length;
          warn(`export failed: ${result.error?.message ?? "unknown error"}`);
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * The SDK's own diagnostics: its "Dropped N spans because maxQueueSize reached" is counted; the
 * rest goes to ag's debug log (export failures are already reported by the counting exporter).
 */
function diagnostics(stats: TracingStats, logger: Logger, warn: (text: string) => void): DiagLogger {
  const report = (message: string, ...args: unknown[]) => {
    const dropped = /Dropped (\d+) spans/.exec(message);
    if (dropped) {
      stats.dropped += Number(dropped[1]);
      warn(message);
    } else logger.debug(`tracing: ${message}`, ...args);
  };
  return { error: report, warn: report, info: report, debug: () => {}, verbose: () => {} };
}
