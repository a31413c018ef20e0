// The dashboard shell: health and the session list, read from the API of the server that
// serves this page and kept current by its event stream (GET /v1/events) instead of polling.
// The API token lives in this module's memory only: never in storage, never in the page's URL.
let token = null;

/** A burst of events (one status change publishes several) becomes one reload of the list. */
const COALESCE_MS = 250;
/** Reconnects wait 1 s, 2 s, 4 s … up to 30 s; a stream that opens starts the sequence again. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/**
 * Uptime and tmux health change without an event saying so: a slow reload of health alone keeps
 * them roughly true, and notices a server that went away while the stream waits to reconnect.
 */
const HEALTH_MS = 60_000;
/**
 * Every name of the catalog (src/events/names.ts). EventSource has no wildcard listener, and an
 * event nobody listens to does not tell us its id: listening to all keeps the last id current, so
 * a reconnect replays only what was really missed.
 */
const EVENT_NAMES = [
  "session.created",
  "session.working",
  "session.idle",
  "session.stalled",
  "session.killed",
  "session.ended",
  "session.turn_ended",
  "permission.requested",
  "consensus.completed",
  "verification",
  "message.user",
  "message.assistant",
  "message.thinking",
  "message.tool_use",
  "message.tool_result",
  "status.idle",
  "status.working",
  "status.permission",
  "status.question",
  "status.plan",
  "status.stall",
  "status.dead",
  "status.stopped",
  "status.error",
  "status.rate_limited",
  "status.permission_timeout",
  "status.recovered",
  "swarm.teammate_spawned",
  "swarm.teammate_finished",
];
/** The events after which the session list may have changed. */
const CHANGES_LIST = /^(session|status|permission)\./;

const $ = (selector) => document.querySelector(selector);

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

async function api(path, init = {}) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const response = await fetch(path, { ...init, headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

const isRefused = (error) => error instanceof ApiError && error.status === 401;

function formatUptime(seconds) {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m` : m ? `${m}m ${s % 60}s` : `${s % 60}s`;
}

function renderHealth(health) {
  const badge = $("#server-status");
  badge.dataset.state = health.status;
  badge.textContent = health.status;
  const field = (name) => document.querySelector(`#health [data-field="${name}"]`);
  field("version").textContent = health.version;
  field("uptime").textContent = formatUptime(health.uptime);
  field("tmux").textContent = health.tmux.healthy ? "healthy" : `unhealthy: ${health.tmux.error}`;
  field("sessions").textContent = `${health.sessions.active} active / ${health.sessions.total} total`;
}

function renderUnreachable() {
  $("#server-status").dataset.state = "down";
  $("#server-status").textContent = "unreachable";
}

function renderSessions(sessions) {
  const body = $("#sessions tbody");
  body.replaceChildren(
    ...sessions.map((s) => {
      const row = document.createElement("tr");
      row.dataset.id = s.id;
      for (const [value, cls] of [
        [s.name, "name"],
        [s.status, "status"],
        [s.workDir, "workdir"],
        [new Date(s.createdAt).toLocaleString(), "created"],
      ]) {
        const cell = document.createElement("td");
        cell.className = cls;
        cell.textContent = value; // never innerHTML: names and paths are user input
        row.append(cell);
      }
      return row;
    }),
  );
  $("#sessions-empty").hidden = sessions.length > 0;
}

/** The small indicator of the event stream: connecting, live, reconnecting or off. */
function renderLive(state, text) {
  const badge = $("#live");
  badge.dataset.state = state;
  badge.textContent = text;
}

/** Health and the session list, once. "ok", "locked" (the token is missing or refused), or "down". */
async function load() {
  try {
    renderHealth(await api("/v1/health"));
  } catch {
    renderUnreachable();
    return "down";
  }
  try {
    renderSessions(await api("/v1/sessions"));
    $("#sessions-error").hidden = true;
    $("#token-form").hidden = true;
    return "ok";
  } catch (error) {
    if (isRefused(error)) {
      lock(token ? "That token was refused." : "");
      return "locked";
    }
    $("#sessions-error").hidden = false;
    $("#sessions-error").textContent = `Could not load sessions: ${error.message}`;
    return "down";
  }
}

// Loads never overlap: a reload asked for while one runs runs once more after it, so the page
// always ends on an answer given after the newest event, and answers never render out of order.
let loading = null;
let loadAgain = false;
function reload() {
  if (loading) {
    loadAgain = true;
    return loading;
  }
  loading = (async () => {
    let result;
    do {
      loadAgain = false;
      result = await load();
    } while (loadAgain);
    loading = null;
    return result;
  })();
  return loading;
}

let coalesceTimer = null;
function scheduleReload() {
  if (coalesceTimer !== null) return;
  coalesceTimer = setTimeout(() => {
    coalesceTimer = null;
    reload();
  }, COALESCE_MS);
}

/**
 * The connection. EventSource's own reconnect reuses its URL, whose SSE token is single use, so
 * every (re)connection is ours: a new token, and `?lastEventId=` (a new EventSource sends no
 * Last-Event-ID header) so the server replays what happened in between.
 */
const stream = {
  source: null,
  lastEventId: null,
  /** Whether the page shows a load that succeeded (and so knows that the token is accepted). */
  loaded: false,
  attempt: 0,
  timer: null,
  /** Bumped by every connect and lock: an older connect still awaiting the network gives up. */
  generation: 0,
};

function stop() {
  stream.generation++;
  clearTimeout(stream.timer);
  stream.timer = null;
  stream.source?.close();
  stream.source = null;
}

function lock(message) {
  stop();
  token = null;
  stream.loaded = false;
  stream.attempt = 0;
  renderLive("off", "offline");
  $("#token-form").hidden = false;
  $("#token-error").textContent = message;
  $("#server-status").dataset.state = "unknown";
  $("#server-status").textContent = "locked";
}

function retry(generation) {
  if (generation !== stream.generation) return;
  const delay = Math.min(BACKOFF_FIRST_MS * 2 ** stream.attempt, BACKOFF_MAX_MS);
  stream.attempt++;
  renderLive("reconnecting", "reconnecting…");
  stream.timer = setTimeout(connect, delay);
}

async function streamUrl() {
  const query = new URLSearchParams();
  // Without SVC_AUTH_TOKEN (no token given) the stream needs none.
  if (token) query.set("token", (await api("/v1/auth/sse-token", { method: "POST" })).token);
  if (stream.lastEventId !== null) query.set("lastEventId", stream.lastEventId);
  const search = query.toString();
  return search ? `/v1/events?${search}` : "/v1/events";
}

async function connect() {
  stop();
  const generation = stream.generation;
  if (stream.attempt === 0) renderLive("connecting", "connecting…");
  let url;
  try {
    if (!stream.loaded) {
      const result = await reload();
      if (result === "locked" || generation !== stream.generation) return;
      if (result !== "ok") return retry(generation);
      stream.loaded = true;
    }
    url = await streamUrl();
  } catch (error) {
    if (generation !== stream.generation) return;
    if (isRefused(error)) return lock("That token was refused.");
    return retry(generation);
  }
  if (generation !== stream.generation) return;
  const source = new EventSource(url);
  stream.source = source;
  source.addEventListener("open", async () => {
    stream.attempt = 0;
    // Without an id the server starts with the next event: what happened since the last load
    // is fetched once, now that the stream is open and nothing more can slip in between.
    if (stream.lastEventId === null) await reload();
    if (stream.source === source) renderLive("live", "live");
  });
  const onEvent = (event) => {
    if (event.lastEventId) stream.lastEventId = event.lastEventId;
    if (CHANGES_LIST.test(event.type)) scheduleReload();
  };
  for (const name of EVENT_NAMES) source.addEventListener(name, onEvent);
  // Events were lost (too far behind, or the server restarted): the REST view is the truth.
  source.addEventListener("gap", scheduleReload);
  source.addEventListener("error", () => {
    if (stream.source !== source) return;
    source.close(); // before EventSource retries by itself with the spent token
    stream.source = null;
    retry(generation);
  });
}

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("#token").value.trim() || null;
  $("#token").value = "";
  stream.loaded = false;
  connect();
});
$("#refresh").addEventListener("click", () => {
  reload();
  if (stream.timer !== null) connect(); // waiting to reconnect: try now
});

connect();
setInterval(async () => {
  if (!stream.loaded) return;
  try {
    renderHealth(await api("/v1/health"));
  } catch {
    renderUnreachable();
  }
}, HEALTH_MS);
