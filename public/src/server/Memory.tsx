import { useSignal } from "@preact/signals";
import { MEMORY_SCOPES } from "../../../src/memory/entry.ts";
import type { MemoryEntry } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

/** What the scope menu offers: every entry, the shared scopes, and the sessions' own memories. */
const SCOPES = ["all", ...MEMORY_SCOPES, "session"] as const;

/**
 * The memory entries this key may see (GET /v1/memory), all of them at first: the scope narrows
 * them to keys under `<scope>/`, the prefix to keys that start with it (after the scope).
 */
export function Memory() {
  const scope = useSignal<(typeof SCOPES)[number]>("all");
  const prefix = useSignal("");
  const wanted = `${scope.value === "all" ? "" : `${scope.value}/`}${prefix.value}`;
  const { data, error } = useLoad<MemoryEntry[]>(
    wanted ? `/v1/memory?prefix=${encodeURIComponent(wanted)}` : "/v1/memory",
  );
  return (
    <div id="memory">
      <Failure text={error.value} />
      <div class="filters">
        <label>
          Scope{" "}
          <select
            id="memory-scope"
            value={scope.value}
            onChange={(e) => {
              scope.value = (e.currentTarget as HTMLSelectElement).value as (typeof SCOPES)[number];
            }}
          >
            {SCOPES.map((s) => (
              <option key={s} value={s}>
                {s === "all" ? "all entries" : `${s}/…`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key prefix{" "}
          <input
            id="memory-prefix"
            type="search"
            value={prefix.value}
            onChange={(e) => {
              prefix.value = (e.currentTarget as HTMLInputElement).value.trim();
            }}
          />
        </label>
      </div>
      {data.value?.length === 0 && <p class="muted">No entries.</p>}
      <table class="data cards">
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
              <td data-label="Key">
                <code>{m.key}</code>
              </td>
              <td data-label="Value" class="value">
                {m.value}
              </td>
              <td data-label="Updated">{new Date(m.updatedAt).toLocaleString()}</td>
              <td data-label="Expires">{m.expiresAt ? new Date(m.expiresAt).toLocaleString() : "never"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
