import { age } from "../format.ts";
import { sessionHref } from "../router.ts";
import type { Pipeline } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

/** Pipelines and their stages, each stage linked to the session that ran it. */
export function Pipelines() {
  const { data, error, reload } = useLoad<Pipeline[]>("/v1/pipelines");
  return (
    <div id="pipelines">
      <Failure text={error.value} />
      <button type="button" onClick={reload}>
        Reload
      </button>
      {data.value?.length === 0 && <p class="muted">No pipelines yet.</p>}
      {(data.value ?? []).map((p) => (
        <article key={p.id} class="pipeline">
          <h3>
            {p.name} <span class="state">{p.status}</span> <span class="muted">{age(p.createdAt)} ago</span>
          </h3>
          <ol>
            {p.stages.map((s) => (
              <li key={s.index}>
                {s.name} · {s.status} {s.sessionId && <a href={sessionHref(s.sessionId)}>session</a>}
                {s.error && <span class="error"> {s.error}</span>}
              </li>
            ))}
          </ol>
        </article>
      ))}
    </div>
  );
}
