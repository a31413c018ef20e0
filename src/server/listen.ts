import { AgError } from "../shared/errors.ts";
import { createRepeatFilter, type Logger, repeatsNote } from "../shared/log.ts";
import type { HttpApp } from "./app.ts";
import { jsonEnvelope } from "./errors.ts";
import { GOING_AWAY, type ServerSocket, type SocketHandlers, socketDispatch } from "./sockets.ts";

export interface HttpServer {
  readonly host: string;
  readonly port: number;
  /** Requests whose handler has not answered yet. */
  inFlight(): number;
  /**
   * Stops accepting at once and closes WebSockets (1001: they never finish by themselves), lets
   * in-flight requests finish for up to `graceMs`, then closes whatever is left (idle keep-alive
   * sockets, streams). Resolves true when all drained in time.
   */
  stop(graceMs: number): Promise<boolean>;
}

/** Bun's idle limit (seconds): a connection that sends and receives nothing this long is closed. */
export const IDLE_TIMEOUT_S = 10;

export async function listen(
  app: HttpApp,
  options: { host: string; port: number; maxBodyBytes: number; idleTimeoutS?: number; logger?: Logger },
): Promise<HttpServer> {
  const repeats = createRepeatFilter();
  const idleTimeout = options.idleTimeoutS ?? IDLE_TIMEOUT_S;
  let inFlight = 0;
  let onDrained: (() => void) | null = null;
  const sockets = new Set<ServerSocket>();

  let server: ReturnType<typeof Bun.serve<SocketHandlers>>;
  try {
    server = Bun.serve<SocketHandlers>({
      hostname: options.host,
      port: options.port,
      // The app answers oversized bodies with a 413 envelope; Bun's own limit is only a backstop.
      maxRequestBodySize: options.maxBodyBytes * 2,
      idleTimeout,
      // Never Bun's developer page (stack, source lines, working directory), whatever NODE_ENV.
      development: false,
      // Out of development mode Bun binds with SO_REUSEPORT unless told not to (measured: a
      // second server on the same port started and shared the connections). One ag per port.
      reusePort: false,
      // What escaped the app (it answers its own errors): the envelope, and one log line a minute.
      error(error) {
        const held = repeats.admit(`escaped ${error.message}`);
        if (held !== null) options.logger?.error(`request failed outside the app${repeatsNote(held)}`, error);
        return jsonEnvelope("INTERNAL_ERROR", "internal error");
      },
      websocket: socketDispatch(sockets),
      async fetch(request, bun) {
        inFlight++;
        try {
          const ip = bun.requestIP(request)?.address ?? null;
          let upgraded = false;
          // Bun counts a connection idle while its handler works, and cuts it after the idle
          // limit (measured: a 16 s handler reset at 12 s). A request that is in and authorized
          // is not idle: the limit is lifted until it is answered (headers and body still get it).
          const response = await app.handle(request, {
            ip,
            handling: () => bun.timeout(request, 0),
            socket: { ip, accept: (data) => (upgraded = bun.upgrade(request, { data })) },
          });
          // The route took the connection over; its own answer is not sent.
          if (upgraded) return undefined;
          // An event stream is quiet for long by design: its own pings and client timeout
          // (SVC_SSE_*) govern it. Any other answer, and the keep-alive after it, get the limit back.
          const stream = response.headers.get("content-type")?.startsWith("text/event-stream");
          bun.timeout(request, stream ? 0 : idleTimeout);
          return response;
        } finally {
          if (--inFlight === 0) onDrained?.();
        }
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || /in use/i.test(String(error))) {
      throw new AgError(
        "PORT_IN_USE",
        `port ${options.port} on ${options.host} is already in use (another ag? try \`ag status\`, or pick another with --port)`,
      );
    }
    if (code === "EADDRNOTAVAIL" || code === "EACCES") {
      throw new AgError("CONFIG_INVALID", `cannot listen on ${options.host}:${options.port} (${code})`);
    }
    throw error;
  }

  return {
    host: options.host,
    port: server.port ?? options.port,
    inFlight: () => inFlight,
    async stop(graceMs) {
      const stopping = server.stop(false);
      for (const socket of sockets) socket.close(GOING_AWAY, "server shutting down");
      const drained =
        inFlight === 0 ||
        (await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), graceMs);
          onDrained = () => {
            clearTimeout(timer);
            resolve(true);
          };
        }));
      await Promise.race([stopping, Bun.sleep(drained ? 50 : 0)]);
      await server.stop(true);
      return drained;
    },
  };
}
