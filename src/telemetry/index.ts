import {
  type Attributes,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import type { Logger } from "../shared/log.ts";
import { VERSION } from "../version.ts";
import type { TracingSettings, TracingStats } from "./settings.ts";

export type { TracingSettings, TracingStats };

/**
 * Tracing (docs/telemetry.md). Everything here speaks `@opentelemetry/api` only: until
 * startTracing() registers the SDK (tracing enabled), its tracer, context and propagator are the
 * API's no-ops, and the SDK itself (./sdk.ts) is never even imported.
 */

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still queued (bounded by its own timeout), then stops. */
  shutdown(): Promise<void>;
}

export type { Span } from "@opentelemetry/api";

const DISABLED: Tracing = { enabled: false, shutdown: async () => {} };
let enabled = false;
let stats: (() => TracingStats) | null = null;

/** What the exporter did since ag started (for /metrics); null when tracing is off. */
export function tracingStats(): TracingStats | null {
  return stats?.() ?? null;
}

/** ag's one tracer: a proxy that becomes the SDK's once startTracing() registers it. */
export const tracer = trace.getTracer("ag", VERSION);

/** Whether spans are made at all: the HTTP layer skips its per-request work when they are not. */
export function tracingEnabled(): boolean {
  return enabled;
}

export async function startTracing(settings: TracingSettings, logger: Logger): Promise<Tracing> {
  if (!settings.otelEnabled) return DISABLED;
  const sdk = await import("./sdk.ts");
  const started = sdk.startSdk(settings, logger);
  enabled = true;
  stats = started.stats;
  return {
    enabled: true,
    async shutdown() {
      enabled = false;
      await started.shutdown();
    },
  };
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/** The caller's trace (W3C `traceparent`/`tracestate`), or the root context when there is none. */
export function extractContext(headers: Headers): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

/** Adds `traceparent` (and `tracestate`) of the active span to outgoing request headers. */
export function injectContext(headers: Record<string, string>): void {
  propagation.inject(context.active(), headers);
}

/** The active span's ids, for log lines; null outside a traced context. */
export function activeIds(): { traceId: string; spanId: string } | null {
  if (!enabled) return null;
  const span = trace.getSpan(context.active());
  if (!span) return null;
  const ids = span.spanContext();
  return trace.isSpanContextValid(ids) ? { traceId: ids.traceId, spanId: ids.spanId } : null;
}

/** Marks a span failed: ERROR status, `error.type` (an AgError's code when it has one), the exception. */
export function recordFailure(span: Span, error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  span.setAttribute("error.type", typeof code === "string" ? code : errorName(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "Error";
}

/**
 * Runs `work` in an INTERNAL span, the active span's child; the span ends when it settles and
 * records a failure before it rethrows it.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!enabled) return work(NO_SPAN);
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** What `inSpan` hands its work when tracing is off: a span that records nothing. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export { context as otelContext, SpanKind, SpanStatusCode, trace as otelTrace };
