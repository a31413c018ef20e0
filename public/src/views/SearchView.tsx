import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { api, describe } from "../api.ts";
import { formatDuration } from "../format.ts";
import { go, searchHref, sessionHref } from "../router.ts";
import type { SearchHit, SearchResult } from "../types.ts";

/**
 * Search every conversation (GET /v1/search, docs/search.md): a box, and the hits best first.
 * Keyboard: ↓/↑ move through the hits from the box (the chosen one is outlined and
 * `aria-current`), Enter opens it (a session's page at the hit's message, `?at=`; an external
 * conversation names the command that continues it), Escape clears. Each hit's title is also a
 * plain link.
 */
export function SearchView({ query }: { query: string }) {
  const hits = useSignal<SearchHit[] | null>(null);
  const error = useSignal<string | null>(null);
  const chosen = useSignal(0);
  const box = useRef<HTMLInputElement>(null);

  useEffect(() => {
    box.current?.focus();
    hits.value = null;
    error.value = null;
    chosen.value = 0;
    if (!query.trim()) return;
    let current = true;
    api<SearchResult>(`/v1/search?q=${encodeURIComponent(query)}&limit=50`)
      .then((result) => {
        if (current) hits.value = result.hits;
      })
      .catch((e) => {
        if (current) error.value = describe(e);
      });
    return () => {
      current = false;
    };
  }, [query]);

  const open = (hit: SearchHit | undefined) => {
    if (hit?.sessionId) go(sessionHref(hit.sessionId, hit.messageId));
  };
  const onKey = (event: KeyboardEvent) => {
    const count = hits.value?.length ?? 0;
    if (event.key === "ArrowDown" && count) chosen.value = Math.min(count - 1, chosen.value + 1);
    else if (event.key === "ArrowUp" && count) chosen.value = Math.max(0, chosen.value - 1);
    else if (event.key === "Escape") go(searchHref(""));
    else return;
    event.preventDefault();
  };

  return (
    <section aria-labelledby="search-title">
      <h2 id="search-title">Search every conversation</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const typed = box.current?.value ?? "";
          // The same words again: open the chosen hit; new words: search them.
          if (typed === query && hits.value?.length) open(hits.value[chosen.value]);
          else go(searchHref(typed));
        }}
      >
        <input
          id="search-box"
          ref={box}
          type="search"
          defaultValue={query}
          placeholder='words, "a phrase", pre*'
          aria-controls="search-hits"
          autocomplete="off"
          onKeyDown={onKey}
        />
        <button type="submit">Search</button>
      </form>
      {error.value && (
        <p id="search-error" class="error" role="alert">
          {error.value}
        </p>
      )}
      {hits.value?.length === 0 && <p id="search-empty">No match.</p>}
      <ol id="search-hits" class="hits">
        {hits.value?.map((hit, i) => (
          <Hit key={hit.hit} hit={hit} index={i} selected={i === chosen.value} />
        ))}
      </ol>
    </section>
  );
}

function Hit(props: { hit: SearchHit; index: number; selected: boolean }) {
  const { hit } = props;
  const age = hit.at ? `${formatDuration(Date.now() - Date.parse(hit.at))} ago` : "";
  return (
    <li
      id={`hit-${props.index}`}
      aria-current={props.selected ? "true" : undefined}
      class={props.selected ? "hit selected" : "hit"}
    >
      <div class="hit-head">
        {hit.sessionId ? (
          <a href={sessionHref(hit.sessionId, hit.messageId)}>{hit.title ?? hit.sessionId}</a>
        ) : (
          <span>{hit.title}</span>
        )}{" "}
        <span class="muted">
          {[hit.agent, hit.role, age, hit.workDir, hit.origin === "external" ? "external" : ""]
            .filter(Boolean)
            .join(" · ")}
        </span>
      </div>
      <p class="snippet">
        {hit.snippet.map((part, i) => (part.hit ? <mark key={i}>{part.text}</mark> : part.text))}
      </p>
      {!hit.sessionId && (
        <p class="muted">
          continue it: <code>ag resume {hit.hit}</code>
        </p>
      )}
    </li>
  );
}
