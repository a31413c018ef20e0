import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, describe } from "../api.ts";
import type { AuditRecord } from "../types.ts";
import { Failure } from "./ServerView.tsx";

const PAGE = 50;

/** Who did what, newest first, paged backwards; the chain's integrity on demand. */
export function Audit() {
  const records = useSignal<AuditRecord[]>([]);
  const more = useSignal(false);
  const error = useSignal<string | null>(null);
  const verdict = useSignal<string | null>(null);

  async function page(before?: number) {
    try {
      const query = before ? `?limit=${PAGE}&before=${before}` : `?limit=${PAGE}`;
      const next = await api<AuditRecord[]>(`/v1/audit${query}`);
      records.value = before ? [...records.value, ...next] : next;
      more.value = next.length === PAGE;
      error.value = null;
    } catch (e) {
      error.value = describe(e);
    }
  }
  useEffect(() => {
    void page();
  }, []);

  async function verify() {
    try {
      const v = await api<{ ok: boolean; checked: number; brokenAt: number | null }>("/v1/audit/verify");
      verdict.value = v.ok ? `Chain intact (${v.checked} records).` : `Chain broken at record ${v.brokenAt}.`;
    } catch (e) {
      verdict.value = describe(e);
    }
  }

  return (
    <div id="audit">
      <Failure text={error.value} />
      <div class="actions">
        <button type="button" onClick={() => page()}>
          Newest
        </button>
        <button type="button" onClick={verify}>
          Verify the chain
        </button>
        {verdict.value && <span role="status">{verdict.value}</span>}
      </div>
      <table class="data cards audit">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {records.value.map((r) => (
            <tr key={r.id} data-outcome={r.outcome}>
              <td data-label="When">{new Date(r.timestamp).toLocaleString()}</td>
              <td data-label="Who">{r.actor}</td>
              <td data-label="Action" class="title">
                {r.action}
              </td>
              <td data-label="Target" class="workdir target">
                {r.target ?? "–"}
              </td>
              <td data-label="Outcome" class="outcome">
                {r.outcome}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {more.value && (
        <button type="button" onClick={() => page(records.value.at(-1)?.id)}>
          Older
        </button>
      )}
    </div>
  );
}
