import { useSignal } from "@preact/signals";
import type { MemoryEntry } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

/** The shared memory entries, filtered by key prefix. */
export function Memory() {
  const prefix = useSignal("");
  const { data, error } = useLoad<MemoryEntry[]>(
    prefix.value ? `/v1/memories?prefix=${encodeURIComponent(prefix.value)}` : "/v1/memories",
  );
  return (
    <div id="memory">
      <Failure text={error.value} />
      <label>
        Key prefix{" "}
        <input
          type="search"
          value={prefix.value}
          onChange={(e) => {
            prefix.value = (e.currentTarget as HTMLInputElement).value.trim();
          }}
        />
      </label>
      {data.value?.length === 0 && <p class="muted">No entries.</p>}
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Value</th>
            <th scope="col">Updated</th>
            <th scope="col">Expires</th>
          </tr>
        </thead>
        <tbody>
          {(data.value ?? []).map((m) => (
            <tr key={m.key}>
              <td>
                <code>{m.key}</code>
              </td>
              <td class="value">{m.value}</td>
              <td>{new Date(m.updatedAt).toLocaleString()}</td>
              <td>{m.expiresAt ? new Date(m.expiresAt).toLocaleString() : "never"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
