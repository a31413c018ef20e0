import { useEffect, useRef } from "preact/hooks";
import type { TranscriptMessage } from "../types.ts";
import type { TranscriptFeed } from "./transcript-feed.ts";

/** The conversation: prompts, answers, thinking, tool calls and their results; text only, never markup. */
export function Transcript({ feed }: { feed: TranscriptFeed }) {
  const list = useRef<HTMLOListElement>(null);
  const messages = feed.messages.value.filter(readable);
  const newest = messages.at(-1)?.id;
  // Follows the newest entry while the reader is at the bottom; leaves them be when they scrolled up.
  const pinned = useRef(true);
  useEffect(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [newest]);
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
          <Entry key={m.id} m={m} />
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

function Entry({ m }: { m: TranscriptMessage }) {
  const time = m.timestamp ? new Date(m.timestamp).toLocaleTimeString() : "";
  switch (m.kind) {
    case "prompt":
      return (
        <li class="entry user" data-kind="prompt">
          <span class="who">you</span> <time>{time}</time>
          <div class="text">{m.text}</div>
        </li>
      );
    case "text":
      return (
        <li class="entry assistant" data-kind="text">
          <span class="who">agent</span> <time>{time}</time>
          <div class="text">{m.text}</div>
        </li>
      );
    case "thinking":
      return (
        <li class="entry thinking" data-kind="thinking">
          <details>
            <summary>thinking</summary>
            <div class="text">{m.text}</div>
          </details>
        </li>
      );
    case "tool_use":
      return (
        <li class="entry tool" data-kind="tool_use">
          <details>
            <summary>
              <span class="tool-name">{m.toolName}</span> {toolSummary(m)}
            </summary>
            <pre>{JSON.stringify(m.toolInput ?? m.text, null, 2)}</pre>
          </details>
        </li>
      );
    case "tool_result":
      return (
        <li class={`entry result${m.isError ? " failed" : ""}`} data-kind="tool_result">
          <details>
            <summary>{m.isError ? "tool failed" : "tool result"}</summary>
            <pre>{m.text}</pre>
          </details>
        </li>
      );
    case "api_error":
    case "interrupt":
      return (
        <li class="entry notice" data-kind={m.kind}>
          {m.kind === "interrupt" ? "Interrupted" : "API error"}: {m.text}
        </li>
      );
    default:
      return (
        <li class="entry other" data-kind={m.kind}>
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
