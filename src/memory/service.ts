import type { Database } from "bun:sqlite";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import {
  MAX_KEY_CHARS,
  MAX_VALUE_BYTES,
  type MemoryEntry,
  type MemoryInput,
  type MemoryScope,
} from "./entry.ts";
import { createMemoryRepo, type MemoryRepo } from "./repo.ts";

export interface MemorySettings {
  enabled: boolean;
  reaperIntervalMs: number;
}

export interface MemoryService {
  readonly enabled: boolean;
  /** Stores (or replaces) an entry; `created` tells a new key from a replaced one. */
  set(input: MemoryInput): { entry: MemoryEntry; created: boolean };
  get(key: string): MemoryEntry;
  list(prefix?: string): MemoryEntry[];
  scope(scope: MemoryScope): MemoryEntry[];
  delete(key: string): void;
  setForSession(sessionId: string, input: MemoryInput): { entry: MemoryEntry; created: boolean };
  listForSession(sessionId: string): MemoryEntry[];
  /** For memoryKeys on session create: null when missing, expired, or the bridge is off. */
  lookup(key: string): { key: string; value: string } | null;
  /** Frees the space of expired entries (they are already invisible); returns how many. */
  reap(): number;
  /** Starts the reaper timer (every reaperIntervalMs). */
  start(): void;
  stop(): void;
}

/** Where a session's memories live: plain entries under one prefix, readable like any other. */
export function sessionPrefix(sessionId: string): string {
  return `session/${sessionId}/`;
}

/**
 * Whether a caller may read or write `key`. Entries are shared configuration, but a session's
 * own (`session/<id>/…`) belong to the session: a key that cannot see the session (another
 * tenant's, one outside a session key's own) must not reach them through the flat routes when
 * /v1/sessions/:id/memories would deny it. `sees` is the sessions domain's answer for the caller.
 */
export function mayUseMemory(key: string, sees: (sessionId: string) => boolean): boolean {
  const sessionId = /^session\/([^/]+)/.exec(key)?.[1];
  return sessionId === undefined || sees(sessionId);
}

export function createMemoryService(deps: {
  db: Database;
  clock: Clock;
  logger: Logger;
  settings: MemorySettings;
  /** Where the entries live: the SQLite table of `db` unless given (a fleet's, docs/fleet.md). */
  repo?: MemoryRepo;
}): MemoryService {
  const repo = deps.repo ?? createMemoryRepo(deps.db);
  const { clock } = deps;
  let cancelReaper: (() => void) | null = null;

  function available(): void {
    if (!deps.settings.enabled) {
      throw new AgError("FEATURE_DISABLED", "the memory bridge is disabled (memoryBridge.enabled = false)");
    }
  }

  function store(key: string, input: MemoryInput) {
    available();
    if (key.length > MAX_KEY_CHARS) {
      throw new AgError(
        "VALIDATION_ERROR",
        `invalid body.key: the stored key "${key.slice(0, 40)}…" is ${key.length} characters; the limit is ${MAX_KEY_CHARS}`,
      );
    }
    const bytes = Buffer.byteLength(input.value, "utf8");
    if (bytes > MAX_VALUE_BYTES) {
      throw new AgError(
        "VALIDATION_ERROR",
        `invalid body.value: ${bytes} bytes of UTF-8; the limit is ${MAX_VALUE_BYTES} (100 KiB)`,
      );
    }
    const now = clock.now();
    const ttlMs = ttlOf(input);
    const created = repo.put(
      {
        key,
        value: input.value,
        at: new Date(now).toISOString(),
        expiresAt: ttlMs === null ? null : now + ttlMs,
      },
      now,
    );
    return { entry: repo.get(key, now)!, created };
  }

  const service: MemoryService = {
    enabled: deps.settings.enabled,
    set: (input) => store(input.key, input),
    get(key) {
      available();
      const entry = repo.get(key, clock.now());
      if (!entry) throw new AgError("MEMORY_NOT_FOUND", `no memory entry "${key}"`);
      return entry;
    },
    list(prefix = "") {
      available();
      return repo.list(prefix, clock.now());
    },
    scope: (scope) => service.list(`${scope}/`),
    delete(key) {
      available();
      if (!repo.delete(key, clock.now())) throw new AgError("MEMORY_NOT_FOUND", `no memory entry "${key}"`);
    },
    setForSession: (sessionId, input) => store(sessionPrefix(sessionId) + input.key, input),
    listForSession: (sessionId) => service.list(sessionPrefix(sessionId)),
    lookup(key) {
      if (!deps.settings.enabled) return null;
      const entry = repo.get(key, clock.now());
      return entry && { key: entry.key, value: entry.value };
    },
    reap() {
      const removed = repo.reap(clock.now());
      if (removed > 0)
        deps.logger.debug(`memory reaper removed ${removed} expired entr${removed === 1 ? "y" : "ies"}`);
      return removed;
    },
    start() {
      if (cancelReaper || !deps.settings.enabled) return;
      const tick = () => {
        try {
          service.reap();
        } catch (error) {
          deps.logger.warn("memory reaper failed", error);
        }
        cancelReaper = clock.setTimer(tick, deps.settings.reaperIntervalMs);
      };
      cancelReaper = clock.setTimer(tick, deps.settings.reaperIntervalMs);
    },
    stop() {
      cancelReaper?.();
      cancelReaper = null;
    },
  };
  return service;
}

/** CONTRACT §6: ttlSeconds wins over ttlMs; milliseconds are rounded up to whole seconds. */
export function ttlOf(input: Pick<MemoryInput, "ttlSeconds" | "ttlMs">): number | null {
  if (input.ttlSeconds !== undefined) return input.ttlSeconds * 1000;
  if (input.ttlMs !== undefined) return Math.ceil(input.ttlMs / 1000) * 1000;
  return null;
}
