import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import type { CheckpointDiff, CheckpointList } from "../../../src/checkpoints/checkpoint.ts";
import { api, describe } from "../api.ts";
import { onEvent } from "../store.ts";

/** A unified diff (git's), each line coloured by its first character. */
function Patch({ patch, label }: { patch: string; label: string }) {
  if (patch === "") return <p class="muted">No file changed.</p>;
  return (
    <pre class="diff" title={label}>
      {patch
        .trimEnd()
        .split("\n")
        .map((text, n) => {
          const op = text.startsWith("+") && !text.startsWith("+++") ? "add" : "";
          const cls = op || (text.startsWith("-") && !text.startsWith("---") ? "del" : "same");
          return (
            <div key={n} class={cls}>
              {text || " "}
            </div>
          );
        })}
    </pre>
  );
}

/**
 * A session's checkpoints (docs/checkpoints.md): each turn with its files and lines, its diff
 * on demand, and a rewind of the folder to it that first shows the diff it would undo.
 */
export function Checkpoints({ sessionId, working }: { sessionId: string; working: boolean }) {
  const list = useSignal<CheckpointList | null>(null);
  const open = useSignal<{ turn: number; patch: string } | null>(null);
  const confirming = useSignal<{ turn: number; patch: string } | null>(null);
  const said = useSignal<{ ok: boolean; text: string } | null>(null);
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;

  async function load() {
    try {
      list.value = await api<CheckpointList>(`${path}/checkpoints`);
    } catch {
      list.value = null; // a session without checkpoints (runAs tenants): the section stays away
    }
  }

  useEffect(() => {
    void load();
    return onEvent((event) => {
      if (event.session?.id === sessionId && event.event === "session.turn_ended") void load();
    });
  }, [sessionId]);

  async function act(what: () => Promise<string>) {
    said.value = null;
    try {
      said.value = { ok: true, text: await what() };
    } catch (e) {
      said.value = { ok: false, text: describe(e) };
    }
    void load();
  }

  const showDiff = (turn: number) =>
    act(async () => {
      const diff = await api<CheckpointDiff>(`${path}/checkpoints/${turn}/diff`);
      open.value = { turn, patch: diff.patch };
      return `turn ${turn}: ${diff.files.length} file(s)`;
    });
  const askRewind = (turn: number) =>
    act(async () => {
      const pending = await api<{ patch: string }>(`${path}/checkpoints/${turn}/rewind-diff`);
      confirming.value = { turn, patch: pending.patch };
      return `a rewind to turn ${turn} undoes the diff below`;
    });
  const rewind = (body: { turn: number } | { undo: true }) =>
    act(async () => {
      confirming.value = null;
      const done = await api<{ turn: number; code: { files: number } }>(`${path}/rewind`, {
        method: "POST",
        body: "turn" in body ? { ...body, what: "code" } : body,
      });
      const how = "undo" in body ? "undid the rewind to" : "rewound the folder to";
      return `${how} turn ${done.turn}: ${done.code.files} file(s) written or removed`;
    });

  const l = list.value;
  if (!l || (l.checkpoints.length === 0 && !l.undo)) return null;
  return (
    <section class="checkpoints" aria-label="Checkpoints">
      <h3>Checkpoints</h3>
      <table>
        <thead>
          <tr>
            <th>Turn</th>
            <th>Prompt</th>
            <th>Files</th>
            <th>+/-</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {l.checkpoints.map((c) => (
            <tr key={c.turn} data-turn={c.turn}>
              <td>{c.turn}</td>
              <td>{(c.prompt ?? "").slice(0, 80)}</td>
              <td>{c.endedAt === null ? "under way" : c.files.map((f) => f.path).join(", ") || "—"}</td>
              <td>
                +{c.added} −{c.removed}
              </td>
              <td>
                {c.endedAt !== null && (
                  <button type="button" onClick={() => void showDiff(c.turn)}>
                    Diff
                  </button>
                )}
                {c.endedAt !== null && (
                  <button type="button" disabled={working} onClick={() => void askRewind(c.turn)}>
                    Rewind to here
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {l.undo && (
        <button type="button" disabled={working} onClick={() => void rewind({ undo: true })}>
          Undo the rewind to turn {l.undo.turn}
        </button>
      )}
      {said.value && (
        <p class={said.value.ok ? "notice" : "error"} role="status">
          {said.value.text}
        </p>
      )}
      {confirming.value && (
        <div class="rewind-confirm" role="dialog" aria-label={`Rewind to turn ${confirming.value.turn}`}>
          <Patch patch={confirming.value.patch} label="what the rewind undoes" />
          <button type="button" class="danger" onClick={() => void rewind({ turn: confirming.value!.turn })}>
            Rewind the folder to turn {confirming.value.turn}
          </button>
          <button type="button" onClick={() => (confirming.value = null)}>
            Cancel
          </button>
        </div>
      )}
      {open.value && <Patch patch={open.value.patch} label={`turn ${open.value.turn}`} />}
    </section>
  );
}
