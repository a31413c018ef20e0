/**
 * A loopback OTLP/HTTP receiver for tracing tests. The exporter (@opentelemetry/exporter-trace-otlp-http) posts the OTLP JSON encoding
 * (`content-type: application/json`): ExportTraceServiceRequest of opentelemetry-proto
 * (collector/trace/v1/trace_service.proto) in protobuf's JSON mapping, lowerCamelCase field
 * names, trace and span ids as hex strings, enums as integers, 64-bit integers as strings. The
 * types below are that message's fields, those the checks read; the payload is parsed as JSON,
 * never searched as a string. (@opentelemetry/otlp-transformer 0.301 no longer exports its
 * request types.)
 */
export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
export interface KeyValue {
  key: string;
  value: AnyValue;
}
/** opentelemetry.proto.trace.v1.Span.SpanKind */
export const SPAN_KIND_INTERNAL = 1;
export const SPAN_KIND_SERVER = 2;
/** opentelemetry.proto.trace.v1.Status.StatusCode */
export const STATUS_CODE_ERROR = 2;
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  events?: Array<{ name: string; attributes?: KeyValue[] }>;
  status?: { code?: number; message?: string };
}
export interface ExportTraceServiceRequest {
  resourceSpans: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans: Array<{ scope?: { name: string }; spans: OtlpSpan[] }>;
  }>;
}

export function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue;
}
export const attrs = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map((kv) => [kv.key, value(kv.value)]));

/** A loopback collector: every POST /v1/traces it gets, decoded. */
export function startCollector() {
  const requests: ExportTraceServiceRequest[] = [];
  const paths: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      paths.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get("content-type")}`);
      requests.push((await request.json()) as ExportTraceServiceRequest);
      return Response.json({});
    },
  });
  const spans = () =>
    requests.flatMap((r) =>
      r.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.map((s) => ({ ...s, resource: attrs(rs.resource?.attributes) })),
        ),
      ),
    );
  return { server, requests, paths, spans, url: `http://127.0.0.1:${server.port}` };
}
