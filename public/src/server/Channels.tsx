import { useSignal } from "@preact/signals";
import { api, describe } from "../api.ts";
import type { ChannelHealth, DeadLetter } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

/** Each channel's health, and the deliveries it gave up on: retried or cleared per channel. */
export function Channels() {
  const health = useLoad<ChannelHealth[]>("/v1/channels/health");
  const dead = useLoad<DeadLetter[]>("/v1/webhooks/dead-letter");
  const said = useSignal<string | null>(null);
  const failed = useSignal<string | null>(null);

  async function act(channel: string, what: "retry" | "clear") {
    said.value = null;
    failed.value = null;
    try {
      const path = `/v1/channels/${encodeURIComponent(channel)}/dead-letters`;
      if (what === "retry") {
        const r = await api<{ requeued: number; kept: number }>(`${path}/retry`, { method: "POST" });
        said.value = `${channel}: ${r.requeued} queued again${r.kept ? `, ${r.kept} kept` : ""}.`;
      } else {
        const r = await api<{ cleared: number }>(path, { method: "DELETE" });
        said.value = `${channel}: ${r.cleared} cleared.`;
      }
    } catch (e) {
      failed.value = describe(e);
    }
    await Promise.all([health.reload(), dead.reload()]);
  }

  const letters = dead.data.value ?? [];
  const channels = [...new Set(letters.map((d) => d.channel))];
  return (
    <div id="channels">
      <Failure text={health.error.value ?? dead.error.value ?? failed.value} />
      {said.value && (
        <p class="notice" role="status">
          {said.value}
        </p>
      )}
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Health</th>
            <th scope="col">Last success</th>
            <th scope="col">Last error</th>
            <th scope="col">Pending</th>
          </tr>
        </thead>
        <tbody>
          {(health.data.value ?? []).map((c) => (
            <tr key={c.channel} data-channel={c.channel}>
              <td>{c.channel}</td>
              <td>
                <span class="state" data-state={c.healthy ? "idle" : "crashed"}>
                  {c.healthy ? "healthy" : "failing"}
                </span>
              </td>
              <td>{c.lastSuccess ? new Date(c.lastSuccess).toLocaleString() : "–"}</td>
              <td>{c.lastError ?? "–"}</td>
              <td>{c.pendingCount}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {health.data.value?.length === 0 && <p class="muted">No channel is configured.</p>}
      <h3>Dead letters</h3>
      {letters.length === 0 && (
        <p class="muted" id="no-dead-letters">
          None: every delivery went through.
        </p>
      )}
      {channels.map((channel) => (
        <div key={channel} class="dead-letters" data-channel={channel}>
          <h4>{channel}</h4>
          <div class="actions">
            <button type="button" class="retry" onClick={() => act(channel, "retry")}>
              Retry all
            </button>
            <button type="button" class="danger" onClick={() => act(channel, "clear")}>
              Clear
            </button>
          </div>
          <ul>
            {letters
              .filter((d) => d.channel === channel)
              .map((d) => (
                <li key={d.id} class="dead-letter">
                  <strong>{d.event.event}</strong> {d.event.session?.name ?? ""} → {d.target}
                  <span class="muted">
                    {" "}
                    · {d.attempts} attempts · {d.lastError} · {new Date(d.failedAt).toLocaleString()}
                  </span>
                </li>
              ))}
          </ul>
        </div>
      ))}
    </div>
  );
}
