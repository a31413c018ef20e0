import type { ApiKey } from "../auth/key.ts";
import type { KeyStore } from "../auth/keys.ts";
import type { EventBus } from "../events/bus.ts";
import type { SessionService } from "../sessions/index.ts";
import { describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { acceptForwarded, newHostSecret } from "./credential.ts";
import { createInterceptor, type Interceptor } from "./intercept.ts";
import { createFleetKeys } from "./keys.ts";
import { createMirror, type FleetEvent } from "./mirror.ts";
import { createPublisher, type LocalSessions } from "./publisher.ts";
import { createFleetSearch, type FleetSearch } from "./search.ts";
import type { FleetShared } from "./shared.ts";
import { createFleetStore, type HostFigures } from "./store.ts";
import type { SocketOffers } from "./terminal.ts";
import { createFleetSessions, type FleetView, headroomOf } from "./view.ts";

/**
 * A fleet member (docs/fleet.md): this host's row and lease in PostgreSQL, its sessions and
 * events published there, every other host's read back through LISTEN/NOTIFY. No leader, no
 * protocol of ours: the database's rows, leases and notifications are the membership. While
 * the database is away the host serves its own sessions as before and says so; once it is back
 * the host registers again, republishes and catches up.
 */

/** Forwarded callers remembered for `keys().active`; past this many the oldest are forgotten. */
const MAX_CALLERS = 1000;

/** The longest a start waits to join (a fleet database that does not answer delays nothing more). */
const JOIN_WAIT_MS = 5_000;

export interface FleetSettings {
  databaseUrl: string;
  hostName: string;
  leaseMs: number;
}

export interface FleetHealth {
  host: string;
  connected: boolean;
  error: string | null;
}

export interface Fleet {
  readonly name: string;
  /** Joins, waiting at most one lease (5 s at most) for it; keeps trying in the background. */
  start(url: string): Promise<void>;
  /** The sessions as this member answers for them (view.ts). */
  sessions(local: SessionService): SessionService;
  intercept: Interceptor;
  /** GET /v1/search over every live host (search.ts). */
  search: FleetSearch;
  /** Every host's events in the fleet's order, for /v1/events. */
  feed: Pick<EventBus, "subscribe" | "since">;
  /**
   * Accepts the credential of a request another host forwards here, then this host's API keys,
   * then every other host's (keys.ts); the keys this host makes are published. `active`
   * knows a forwarded caller as it was last accepted (a relayed terminal checks its caller again
   * at each input; its own key is checked by the host it asked).
   */
  keys(inner: KeyStore): KeyStore;
  health(): FleetHealth;
  view(): FleetView;
  /** Ends the lease at once (a clean stop: offline everywhere now) and closes the connections. */
  close(): Promise<void>;
}

export function createFleet(deps: {
  settings: FleetSettings;
  bus: Pick<EventBus, "subscribe">;
  local: LocalSessions;
  figures(): Promise<HostFigures>;
  /** The WebSocket upgrades the listener offers (another host's terminal is relayed). */
  sockets?: SocketOffers;
  /** Templates, memory and tenants kept in the fleet database (shared.ts). */
  shared?: Pick<FleetShared, "bind" | "reload" | "notified">;
  logger: Logger;
}): Fleet {
  const { settings, logger } = deps;
  const name = settings.hostName;
  const store = createFleetStore(settings.databaseUrl, {
    connectionTimeoutS: Math.max(1, Math.ceil(settings.leaseMs / 1000)),
  });
  const secret = newHostSecret();
  const mirror = createMirror({ store });
  let url = "";
  let connected = false;
  let error: string | null = "not joined yet";
  let listening = false;
  let timer: ReturnType<typeof setInterval> | null = null;
  let ticking: Promise<void> | null = null;

  function failed(cause: unknown): void {
    const why = describeError(cause);
    if (connected || error !== why)
      logger.warn(
        `fleet: the fleet database does not answer (${why}); serving this host's sessions locally, catching up when it is back`,
      );
    connected = false;
    error = why;
  }

  const publisher = createPublisher({ store, host: name, bus: deps.bus, sessions: deps.local, failed });
  const fleetKeys = createFleetKeys({ store, host: name, failed });
  deps.shared?.bind({ store, host: name, failed });
  const reloadShared = () => deps.shared?.reload() ?? Promise.resolve();

  /** Notifications are handled one after another, in the order they came. */
  let handled: Promise<void> = Promise.resolve();
  function onNotify(payload: string): void {
    const read = payload.startsWith("k:")
      ? () => fleetKeys.notified(payload.slice(2))
      : async () => {
          if (!(await deps.shared?.notified(payload))) await mirror.notified(payload);
        };
    handled = handled.then(read).catch(failed);
  }
  /**
   * Every resubscription (the listening connection came back) may have missed notifications: read
   * everything again. The first is the join's own, which reads everything itself.
   */
  let subscribed = false;
  function onListen(): void {
    if (!subscribed) {
      subscribed = true;
      return;
    }
    handled = handled
      .then(() => Promise.all([mirror.reload(), fleetKeys.reload(), reloadShared()]))
      .then(() => {}, failed);
  }

  async function join(): Promise<void> {
    await store.migrate();
    await store.register({ name, url, secret, leaseMs: settings.leaseMs }, await deps.figures());
    if (!listening) {
      await store.listen(onNotify, onListen);
      listening = true;
    }
    await mirror.reload();
    await fleetKeys.reload();
    await reloadShared();
    await publisher.republish();
    if (!connected) logger.info(`fleet: host ${name} joined the fleet (lease ${settings.leaseMs} ms)`);
    connected = true;
    error = null;
  }

  async function heartbeat(): Promise<boolean> {
    return store.heartbeat(name, settings.leaseMs, await deps.figures());
  }

  async function tick(): Promise<void> {
    if (!connected) return join();
    // A row gone (someone cleaned the table) is a new registration.
    if (!(await heartbeat())) return join();
    await mirror.refreshHosts();
    await publisher.flush();
    await publisher.sync();
  }

  function runTick(): Promise<void> {
    ticking ??= tick()
      .catch(failed)
      .finally(() => {
        ticking = null;
      });
    return ticking;
  }

  const isLocal = (id: string) => deps.local.find(id) !== null;
  /** Forwarded callers as last accepted, by their key id (`fleet:<host>/<actor>`). */
  const callers = new Map<string, ApiKey>();

  const feed: Fleet["feed"] = {
    subscribe: (listener) => mirror.subscribe(listener as (event: FleetEvent) => void),
    since: (id) => mirror.since(id),
  };

  return {
    name,
    async start(advertised) {
      url = advertised;
      timer = setInterval(() => void runTick(), Math.max(100, Math.floor(settings.leaseMs / 4)));
      await Promise.race([runTick(), Bun.sleep(Math.min(settings.leaseMs, JOIN_WAIT_MS))]);
    },
    sessions: (local) => createFleetSessions({ self: name, local, mirror, isLocal }),
    intercept: createInterceptor({ self: name, mirror, isLocal, sockets: deps.sockets }),
    search: createFleetSearch({ self: name, mirror }),
    feed,
    keys(own) {
      const inner = fleetKeys.wrap(own);
      return {
        ...inner,
        authenticate(token) {
          const forwarded = acceptForwarded(token, secret);
          if (!forwarded) return inner.authenticate(token);
          callers.set(forwarded.id, forwarded);
          if (callers.size > MAX_CALLERS) callers.delete(callers.keys().next().value!);
          return forwarded;
        },
        active: (id) => callers.get(id) ?? inner.active(id),
      };
    },
    health: () => ({ host: name, connected, error }),
    view() {
      const counts = new Map<string, number>();
      for (const r of mirror.sessions()) counts.set(r.host, (counts.get(r.host) ?? 0) + 1);
      counts.set(name, deps.local.all().length);
      return {
        host: name,
        connected,
        error,
        leaseMs: settings.leaseMs,
        hosts: mirror.hosts().map(({ secret: _secret, ...h }) => ({
          ...h,
          online: h.name === name ? true : h.online,
          self: h.name === name,
          headroomMb: headroomOf(h),
          sessions: counts.get(h.name) ?? 0,
        })),
      };
    },
    async close() {
      if (timer) clearInterval(timer);
      publisher.stop();
      await ticking;
      try {
        if (connected) {
          await publisher.flush();
          await store.release(name);
        }
      } catch (cause) {
        logger.warn(`fleet: could not end the lease of ${name} cleanly: ${describeError(cause)}`);
      }
      await store.close().catch(() => {});
    },
  };
}
