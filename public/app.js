// The dashboard shell: health and the session list, read from the API of the server that
// serves this page. The API token lives in this module's memory only: never in storage, never
// in the URL.
let token = null;
const REFRESH_MS = 5000;

const $ = (selector) => document.querySelector(selector);

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

async function api(path) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  const response = await fetch(path, { headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

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

function askForToken(message) {
  $("#token-form").hidden = false;
  $("#token-error").textContent = message ?? "";
  $("#server-status").dataset.state = "unknown";
  $("#server-status").textContent = "locked";
}

async function refresh() {
  try {
    renderHealth(await api("/v1/health"));
  } catch {
    $("#server-status").dataset.state = "down";
    $("#server-status").textContent = "unreachable";
    return;
  }
  try {
    renderSessions(await api("/v1/sessions"));
    $("#sessions-error").hidden = true;
    $("#token-form").hidden = true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      askForToken(token ? "That token was refused." : "");
      token = null;
      return;
    }
    $("#sessions-error").hidden = false;
    $("#sessions-error").textContent = `Could not load sessions: ${error.message}`;
  }
}

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("#token").value.trim() || null;
  $("#token").value = "";
  refresh();
});
$("#refresh").addEventListener("click", refresh);

refresh();
setInterval(refresh, REFRESH_MS);
