/**
 * What the page knows of the server: health, the sessions and their costs, kept current by the
 * event stream (no polling), and whether it waits for a token.
 */

import { signal } from "@preact/signals";
import { api, hasToken, isForbidden, isRefused, setToken } from "./api.ts";
import { coalesced } from "./coalesce.ts";
import { createStream } from "./stream.ts";
import type { AgEvent, AgentUsage, Health, MetricsReport, Session, SessionUsage } from "./types.ts";

/** A burst of events (one status change publishes several) becomes one reload of the list. */
const COALESCE_MS = 250;
/** Uptime and tmux health change without an event saying so: a slow reload keeps them roughly true. */
const HEALTH_MS = 60_000;
/** Nor do the agents' memory and CPU: GET /v1/metrics is read again this often while the page shows. */
const AGENTS_MS = 15_000;
/** The events after which the session list may have changed. */
const CHANGES_LIST = /^(session|status|permission)\./;
/** The events after which a session's tokens and cost may have changed: the agent wrote, or a turn ended. */
export const CHANGES_USAGE = /^(message\.|session\.turn_ended$)/;
/** A turn writes many messages: their usage is read once per this much. */
const USAGE_COALESCE_MS = 1000;

export type ServerState = "unknown" | "ok" | "degraded" | "down" | "locked";

export const health = signal<Health | null>(null);
export const serverState = signal<ServerState>("unknown");
export const sessions = signal<Session[]>([]);
export const sessionsError = signal<string | null>(null);
/**
 * Tokens and estimated cost per session id, both from GET /v1/metrics (`bySession`: one reading
 * of the transcript, so the two never disagree), read again after each event that may change them.
 */
export const usage = signal<Record<string, SessionUsage>>({});
/** What each running session's agent process tree takes now (RSS, CPU), from GET /v1/metrics. */
export const agentUsage = signal<Record<string, AgentUsage>>({});
/** Whether the server accepted the page (token or none): views load only then. */
export const ready = signal(false);
/** null: not locked; "" asks for a token; otherwise why the last one was refused. */
export const lockMessage = signal<string | null>(null);

const listeners = new Set<(event: AgEvent) => void>();
/** Follows every event (a session view follows its own session's). */
export function onEvent(listener: (event: AgEvent) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
const reconnectListeners = new Set<() => void>();
/** After a gap or a fresh load: what a view shows may be stale. */
export function onResync(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

function lock(message: string) {
  ready.value = false;
  stream.lock();
  setToken(null);
  lockMessage.value = message;
  serverState.value = "locked";
}

async function loadHealth(): Promise<boolean> {
  try {
    const answer = await api<Health>("/v1/health");
    health.value = answer;
    serverState.value = answer.status;
    return true;
  } catch {
    serverState.value = "down";
    return false;
  }
}

async function loadUsage() {
  try {
    const report = await api<MetricsReport>("/v1/metrics");
    usage.value = Object.fromEntries(
      report.bySession.map((s) => [s.id, { tokens: s.tokens, usd: s.estimatedCost.usd }]),
    );
    agentUsage.value = Object.fromEntries(report.agents.bySession.map((a) => [a.id, a]));
  } catch {
    // Costs and the agents' figures are extra: the list stands without them.
  }
}

/** Health, the session list and costs, once. */
async function load(): Promise<"ok" | "locked" | "down"> {
  if (!(await loadHealth())) return "down";
  // With auth on a request without a token is refused, and audited as a denial: ask for it first.
  if (health.value?.auth === "token" && !hasToken()) {
    lock("");
    return "locked";
  }
  try {
    sessions.value = await api<Session[]>("/v1/sessions");
    sessionsError.value = null;
    lockMessage.value = null;
    ready.value = true;
  } catch (error) {
    if (isRefused(error)) {
      lock(hasToken() ? "That token was refused." : "");
      return "locked";
    }
    sessionsError.value = `Could not load sessions: ${(error as Error).message}`;
    // A key without sessions:read (an admin key) is let in all the same: the server views are its.
    if (!isForbidden(error)) return "down";
    sessions.value = [];
    lockMessage.value = null;
    ready.value = true;
    return "ok";
  }
  void loadUsage();
  return "ok";
}

/** After a (re)connection, a gap or a new token: the views read what they show again. */
async function resync(): Promise<"ok" | "locked" | "down"> {
  const result = await reload();
  if (result === "ok") for (const listener of reconnectListeners) listener();
  return result;
}

// Loads never overlap: a reload asked for while one runs runs once more after it, so the page
// always ends on an answer given after the newest event, and answers never render out of order.
let loading: Promise<"ok" | "locked" | "down"> | null = null;
let loadAgain = false;
export function reload(): Promise<"ok" | "locked" | "down"> {
  if (loading) {
    loadAgain = true;
    return loading;
  }
  loading = (async () => {
    let result: "ok" | "locked" | "down";
    do {
      loadAgain = false;
      result = await load();
    } while (loadAgain);
    loading = null;
    return result;
  })();
  return loading;
}

const listReload = coalesced(() => void reload(), COALESCE_MS);
const usageReload = coalesced(() => void loadUsage(), USAGE_COALESCE_MS);

const stream = createStream({
  load: reload,
  // Every (re)opened stream: events may have been missed (ag restarted and numbers anew).
  opened: resync,
  event(event) {
    if (CHANGES_LIST.test(event.event)) listReload.schedule();
    if (CHANGES_USAGE.test(event.event)) usageReload.schedule();
    for (const listener of listeners) listener(event);
  },
  gap: () => void resync(),
  refused: () => lock("That token was refused."),
});

/** A token typed into the form (empty: none). */
export function useToken(value: string) {
  setToken(value.trim() || null);
  stream.restart();
}

export function refresh() {
  void reload();
  stream.nudge();
}

export function start() {
  stream.connect();
  setInterval(() => {
    if (stream.loaded) void loadHealth();
  }, HEALTH_MS);
  setInterval(() => {
    if (stream.loaded && ready.value && document.visibilityState === "visible") void loadUsage();
  }, AGENTS_MS);
}
