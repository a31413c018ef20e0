import { useEffect, useRef } from "preact/hooks";
import type { TranscriptMessage } from "../types.ts";
import type { TranscriptFeed } from "./transcript-feed.ts";

/**
 * The conversation: prompts, answers, thinking, tool calls and their results; text only, never
 * markup. With `at` (a search hit's message, `#/sessions/<id>?at=<messageId>`), older pages are
 * read until that message is shown, and it is scrolled to and highlighted (`aria-current`).
 */
export function Transcript({ feed, at }: { feed: TranscriptFeed; at?: number }) {
  const list = useRef<HTMLOListElement>(null);
  const messages = feed.messages.value.filter(readable);
  const newest = messages.at(-1)?.id;
  // Follows the newest entry while the reader is at the bottom; leaves them be when they scrolled up.
  const pinned = useRef(at === undefined);
  useEffect(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [newest]);
  useEffect(() => {
    if (at === undefined) return;
    pinned.current = false;
    void feed.reach(at);
  }, [feed, at]);
  const shown = at !== undefined && messages.some((m) => m.id === at);
  useEffect(() => {
    if (shown) list.current?.querySelector(`#message-${at}`)?.scrollIntoView({ block: "center" });
  }, [shown, at]);
  return (
    <section class="transcript" aria-labelledby="transcript-title">
      <h3 id="transcript-title">Transcript</h3>
      {feed.error.value && <p class="error">{feed.error.value}</p>}
      <ol
        ref={list}
        class="messages"
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {feed.hasMore.value && (
          <li class="older">
            <button type="button" onClick={() => feed.older()}>
              Load older
            </button>
          </li>
        )}
        {messages.length === 0 && <li class="muted">Nothing written yet.</li>}
        {messages.map((m) => (
          <Entry key={m.id} m={m} at={m.id === at} />
        ))}
      </ol>
    </section>
  );
}

/**
 * Bookkeeping (a turn's duration, a hook's summary: `system`) and entries with no text are not
 * conversation: shown, they were blank rows after every turn.
 */
export const readable = (m: Pick<TranscriptMessage, "kind" | "text">) =>
  m.kind !== "system" && (m.kind === "tool_use" || m.kind === "tool_result" || m.text.trim() !== "");

/** Each entry's anchor (`message-<id>`), and the mark of the one a link opened at. */
const mark = (m: TranscriptMessage, at: boolean) => ({
  id: `message-${m.id}`,
  "aria-current": at ? ("true" as const) : undefined,
});

function Entry({ m, at }: { m: TranscriptMessage; at: boolean }) {
  const time = m.timestamp ? new Date(m.timestamp).toLocaleTimeString() : "";
  const here = mark(m, at);
  const cls = (name: string) => (at ? `${name} at` : name);
  switch (m.kind) {
    case "prompt":
      return (
        <li {...here} class={cls("entry user")} data-kind="prompt">
          <span class="who">you</span> <time>{time}</time>
          <div class="text">{m.text}</div>
        </li>
      );
    case "text":
      return (
        <li {...here} class={cls("entry assistant")} data-kind="text">
          <span class="who">agent</span> <time>{time}</time>
          <div class="text">{m.text}</div>
        </li>
      );
    case "thinking":
      return (
        <li {...here} class={cls("entry thinking")} data-kind="thinking">
          <details open={at}>
            <summary>thinking</summary>
            <div class="text">{m.text}</div>
          </details>
        </li>
      );
    case "tool_use":
      return (
        <li {...here} class={cls("entry tool")} data-kind="tool_use">
          <details open={at}>
            <summary>
              <span class="tool-name">{m.toolName}</span> {toolSummary(m)}
            </summary>
            <pre>{JSON.stringify(m.toolInput ?? m.text, null, 2)}</pre>
          </details>
        </li>
      );
    case "tool_result":
      return (
        <li {...here} class={cls(`entry result${m.isError ? " failed" : ""}`)} data-kind="tool_result">
          <details open={at}>
            <summary>{m.isError ? "tool failed" : "tool result"}</summary>
            <pre>{m.text}</pre>
          </details>
        </li>
      );
    case "api_error":
    case "interrupt":
      return (
        <li {...here} class={cls("entry notice")} data-kind={m.kind}>
          {m.kind === "interrupt" ? "Interrupted" : "API error"}: {m.text}
        </li>
      );
    default:
      return (
        <li {...here} class={cls("entry other")} data-kind={m.kind}>
          <div class="text muted">{m.text}</div>
        </li>
      );
  }
}

/** One line for a tool call: its command, file or pattern. */
export function toolSummary(m: Pick<TranscriptMessage, "toolInput">): string {
  const input = (m.toolInput ?? {}) as Record<string, unknown>;
  for (const key of ["command", "file_path", "path", "pattern", "url", "description"]) {
    if (typeof input[key] === "string") return String(input[key]).split("\n")[0]!.slice(0, 120);
  }
  return "";
}
