import { useSignal } from "@preact/signals";
import type { Scope } from "../../../src/auth/scopes.ts";
import { api, describe } from "../api.ts";
import type { ApiKey } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

/** Every scope a key can hold (a missing one is a type error), in words. */
const SCOPE_WORDS: Record<Scope, string> = {
  "sessions:read": "read sessions",
  "sessions:write": "drive sessions (send, approve, kill, take control)",
  "memory:read": "read memory",
  "memory:write": "write memory",
  "templates:read": "read templates",
  "templates:write": "write templates",
  "pipelines:read": "read pipelines",
  "pipelines:write": "run pipelines",
  admin: "the server itself (keys, audit, channels)",
  "*": "everything",
};

/** API keys: created with scopes (the key is shown once), listed by prefix, revoked. */
export function Keys() {
  const { data, error, reload } = useLoad<ApiKey[]>("/v1/auth/keys");
  const created = useSignal<string | null>(null);
  const failed = useSignal<string | null>(null);

  async function create(form: HTMLFormElement) {
    const data = new FormData(form);
    const scopes = data.getAll("scopes").map(String);
    failed.value = null;
    try {
      const key = await api<{ key: string }>("/v1/auth/keys", {
        method: "POST",
        body: { name: String(data.get("name") ?? "").trim(), scopes },
      });
      created.value = key.key;
      form.reset();
    } catch (e) {
      failed.value = describe(e);
    }
    await reload();
  }

  async function revoke(key: ApiKey) {
    if (!confirm(`Revoke key ${key.name} (${key.prefix}…)? Clients using it are refused at once.`)) return;
    try {
      await api(`/v1/auth/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
    } catch (e) {
      failed.value = describe(e);
    }
    await reload();
  }

  return (
    <div id="keys">
      <Failure text={error.value ?? failed.value} />
      {created.value && (
        <div class="notice created-key" role="status">
          <p>The new key, shown this once: copy it now.</p>
          <code id="created-key">{created.value}</code>{" "}
          <button type="button" onClick={() => navigator.clipboard?.writeText(created.value ?? "")}>
            Copy
          </button>{" "}
          <button
            type="button"
            onClick={() => {
              created.value = null;
            }}
          >
            Done
          </button>
        </div>
      )}
      <form
        class="new-key"
        onSubmit={(e) => {
          e.preventDefault();
          void create(e.currentTarget);
        }}
      >
        <label>
          Name <input name="name" required maxLength={128} autocomplete="off" />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {Object.entries(SCOPE_WORDS).map(([scope, words]) => (
            <label key={scope} class="check">
              <input type="checkbox" name="scopes" value={scope} /> <code>{scope}</code> {words}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <table class="data cards">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Revoke</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(data.value ?? []).map((k) => (
            <tr key={k.id}>
              <td class="title">{k.name}</td>
              <td data-label="Prefix">
                <code>{k.prefix}…</code>
              </td>
              <td data-label="Scopes">{k.scopes.join(", ")}</td>
              <td data-label="Last used">
                {k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : "never"}
              </td>
              <td class="row-action">
                <button type="button" class="danger" onClick={() => revoke(k)}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
