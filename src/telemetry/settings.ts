/** What tracing is started with (config's otel settings); the lazily loaded SDK (sdk.ts) reads it too. */
export interface TracingSettings {
  otelEnabled: boolean;
  otelOtlpEndpoint: string;
  otelServiceName: string;
  otelSampleRate: number;
}

/** What the exporter did since ag started (for /metrics); null when tracing is off. */
export interface TracingStats {
  exported: number;
  failed: number;
  dropped: number;
}
