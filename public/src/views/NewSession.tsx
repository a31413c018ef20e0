import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import type { PermissionMode } from "../../../src/config/schema.ts";
import { api, describe } from "../api.ts";
import { go, sessionHref } from "../router.ts";
import type { Session } from "../types.ts";

/** Every mode the server takes (a missing one is a type error), in words. */
const MODES: Record<PermissionMode, string> = {
  default: "default: ask before edits and commands",
  acceptEdits: "acceptEdits: edits without asking",
  plan: "plan: plan first, approve the plan",
  auto: "auto",
  dontAsk: "dontAsk: never ask, refuse what is not allowed",
  bypassPermissions: "bypassPermissions: never ask (trusted folders only)",
};

interface TemplateItem {
  id: string;
  name: string;
}

/** Starts a session, as POST /v1/sessions does; the API's own words when it refuses. */
export function NewSession() {
  const templates = useSignal<TemplateItem[]>([]);
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  useEffect(() => {
    api<TemplateItem[]>("/v1/templates").then(
      (list) => {
        templates.value = list;
      },
      () => {},
    );
  }, []);

  async function submit(form: HTMLFormElement) {
    const data = new FormData(form);
    const field = (name: string) => String(data.get(name) ?? "").trim();
    const body: Record<string, unknown> = {};
    for (const name of ["name", "workDir", "prompt", "templateId", "permissionMode"]) {
      const value = name === "prompt" ? String(data.get(name) ?? "") : field(name);
      if (value.trim()) body[name] = value;
    }
    const keys = field("memoryKeys")
      .split(/[\s,]+/)
      .filter(Boolean);
    if (keys.length) body.memoryKeys = keys;
    busy.value = true;
    error.value = null;
    try {
      const created = await api<Session>("/v1/sessions", { method: "POST", body });
      go(sessionHref(created.id));
    } catch (e) {
      error.value = describe(e);
    } finally {
      busy.value = false;
    }
  }

  return (
    <section aria-labelledby="new-title" class="new-session">
      <h2 id="new-title">New session</h2>
      <form
        id="new-session"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(e.currentTarget);
        }}
      >
        <label>
          Work dir{" "}
          <input name="workDir" placeholder="/path/to/repo (default: the server's)" autocomplete="off" />
        </label>
        <label>
          Name <input name="name" maxLength={128} autocomplete="off" />
        </label>
        <label>
          Prompt <textarea name="prompt" rows={5} />
        </label>
        <label>
          Template{" "}
          <select name="templateId">
            <option value="">none</option>
            {templates.value.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Permission mode{" "}
          <select name="permissionMode">
            <option value="">the server's default</option>
            {Object.entries(MODES).map(([mode, words]) => (
              <option key={mode} value={mode}>
                {words}
              </option>
            ))}
          </select>
        </label>
        <label>
          Memory keys <input name="memoryKeys" placeholder="comma separated" autocomplete="off" />
        </label>
        <button type="submit" disabled={busy.value}>
          {busy.value ? "Starting…" : "Start"}
        </button>
        {error.value && (
          <p class="error" role="alert" id="new-error">
            {error.value}
          </p>
        )}
      </form>
    </section>
  );
}
