import { useComputed, useSignal } from "@preact/signals";
import { TERMINAL_STATES } from "../../../src/events/names.ts";
import {
  age,
  agentMode,
  formatCost,
  formatCpu,
  formatDuration,
  formatMemory,
  formatTokens,
  pendingSummary,
  STATE_WORDS,
  totalTokens,
  waitsForHuman,
} from "../format.ts";
import { sessionHref } from "../router.ts";
import { agentUsage, health, sessions, sessionsError, usage } from "../store.ts";
import type { AgentUsage, Session, SessionStatus, SessionUsage } from "../types.ts";

const FILTERS = [
  "running",
  "all",
  "working",
  "idle",
  "permission_prompt",
  "asking",
  "stalled",
  "killed",
  "completed",
  "crashed",
] as const;
type Filter = (typeof FILTERS)[number];

function matches(s: Session, filter: Filter, search: string, host = ""): boolean {
  if (host && s.host !== host) return false;
  if (filter === "running" && (TERMINAL_STATES as readonly SessionStatus[]).includes(s.status)) return false;
  if (filter !== "running" && filter !== "all" && s.status !== filter) return false;
  if (!search) return true;
  const wanted = search.toLowerCase();
  return s.name.toLowerCase().includes(wanted) || s.workDir.toLowerCase().includes(wanted);
}

/** Those waiting on a person first, then the most recently active. */
function byUrgency(a: Session, b: Session): number {
  const human = Number(waitsForHuman(b)) - Number(waitsForHuman(a));
  return human || Date.parse(b.lastActivityAt) - Date.parse(a.lastActivityAt);
}

export function SessionList() {
  const filter = useSignal<Filter>("running");
  const search = useSignal("");
  // In a fleet (docs/fleet.md) every session names its host: a HOST column and a host filter.
  const host = useSignal("");
  const hosts = useComputed(() =>
    [...new Set(sessions.value.flatMap((s) => (s.host ? [s.host] : [])))].sort(),
  );
  const fleet = hosts.value.length > 0;
  const shown = useComputed(() =>
    sessions.value.filter((s) => matches(s, filter.value, search.value.trim(), host.value)).sort(byUrgency),
  );
  const waiting = useComputed(() => sessions.value.filter(waitsForHuman).length);
  return (
    <>
      <HealthBox />
      <section aria-labelledby="sessions-title">
        <div class="section-head">
          <h2 id="sessions-title">
            Sessions {waiting.value > 0 && <span class="count-waiting">{waiting.value} waiting for you</span>}
          </h2>
          <div class="filters">
            <label>
              Show{" "}
              <select
                id="filter"
                value={filter.value}
                onChange={(e) => {
                  filter.value = (e.currentTarget as HTMLSelectElement).value as Filter;
                }}
              >
                {FILTERS.map((f) => (
                  <option value={f} key={f}>
                    {f === "running" || f === "all" ? f : STATE_WORDS[f]}
                  </option>
                ))}
              </select>
            </label>
            {fleet && (
              <label>
                Host{" "}
                <select
                  id="host-filter"
                  value={host.value}
                  onChange={(e) => {
                    host.value = (e.currentTarget as HTMLSelectElement).value;
                  }}
                >
                  <option value="">all</option>
                  {hosts.value.map((h) => (
                    <option value={h} key={h}>
                      {h}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <label>
              Search{" "}
              <input
                id="search"
                type="search"
                placeholder="name or work dir"
                value={search.value}
                onInput={(e) => {
                  search.value = (e.currentTarget as HTMLInputElement).value;
                }}
              />
            </label>
          </div>
        </div>
        {sessionsError.value && (
          <p id="sessions-error" class="error" role="alert">
            {sessionsError.value}
          </p>
        )}
        {sessions.value.length === 0 && !sessionsError.value && (
          <p id="sessions-empty">
            No sessions yet. <a href="#/new">Start one</a>, or run <code>ag run "…"</code>.
          </p>
        )}
        <table id="sessions" class="sessions">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              {fleet && <th scope="col">Host</th>}
              <th scope="col">Work dir</th>
              <th scope="col">Agent · mode</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
              <th scope="col" title="resident memory of the agent and every process it started">
                Mem
              </th>
              <th scope="col" title="share of one core the agent and its processes used lately">
                CPU
              </th>
              <th scope="col">Age</th>
            </tr>
          </thead>
          <tbody>
            {shown.value.flatMap((s) => rows(s, usage.value[s.id], agentUsage.value[s.id], fleet))}
          </tbody>
        </table>
      </section>
    </>
  );
}

/** Columns of a row, for the pending row that spans them all. */
const COLUMNS = 9;

function rows(s: Session, used: SessionUsage | undefined, usage: AgentUsage | undefined, fleet = false) {
  // Tokens and cost from one reading (the metrics); the session's own count until there is one.
  const tokens = used?.tokens ?? s.tokenUsage;
  const processes =
    usage && `${usage.processes} process${usage.processes === 1 ? "" : "es"}, pid ${usage.pid}`;
  const row = (
    <tr key={s.id} data-id={s.id} data-state={s.status} class={waitsForHuman(s) ? "waiting" : undefined}>
      <td class="name">
        <a href={sessionHref(s.id)}>{s.name}</a>
      </td>
      <td class="status">
        <span class="state" data-state={s.status}>
          {STATE_WORDS[s.status]}
        </span>
      </td>
      {fleet && (
        <td class="host" data-online={String(s.hostOnline !== false)}>
          {s.hostOnline === false ? `${s.host} (offline)` : s.host}
        </td>
      )}
      <td class="workdir">{s.workDir}</td>
      <td class="agent">{agentMode(s)}</td>
      <td class="tokens" title={`${tokens.input} in, ${tokens.output} out`}>
        {formatTokens(totalTokens(tokens))}
      </td>
      <td class="cost">{formatCost(used?.usd)}</td>
      <td class="mem" title={processes}>
        {formatMemory(usage?.rssBytes)}
      </td>
      <td class="cpu" title={processes}>
        {formatCpu(usage?.cpuPercent)}
      </td>
      <td class="age" title={new Date(s.createdAt).toLocaleString()}>
        {age(s.createdAt)}
      </td>
    </tr>
  );
  if (!waitsForHuman(s)) return [row];
  return [
    row,
    <tr key={`${s.id}-pending`} class="pending-row" data-id={s.id}>
      <td colSpan={COLUMNS + Number(fleet)}>
        <a href={sessionHref(s.id)} class="pending-link">
          <strong>{s.status === "asking" ? "Asks:" : "Wants to:"}</strong> {pendingSummary(s)}
        </a>
      </td>
    </tr>,
  ];
}

function HealthBox() {
  const h = health.value;
  return (
    <section aria-labelledby="health-title" class="health">
      <h2 id="health-title" class="visually-hidden">
        Server
      </h2>
      <dl id="health">
        <dt>Version</dt>
        <dd data-field="version">{h?.version ?? "–"}</dd>
        <dt>Uptime</dt>
        <dd data-field="uptime">{h ? formatDuration(h.uptime * 1000) : "–"}</dd>
        <dt>tmux</dt>
        <dd data-field="tmux">{h ? (h.tmux.healthy ? "healthy" : `unhealthy: ${h.tmux.error}`) : "–"}</dd>
        <dt>Sessions</dt>
        <dd data-field="sessions">{h ? `${h.sessions.active} active / ${h.sessions.total} total` : "–"}</dd>
      </dl>
    </section>
  );
}
