/**
 * A session's transcript as the cursor API pages it: the newest page first, older pages on
 * demand, and what the agent writes next followed live (each message.* event asks for the
 * newest page again; what is already shown is kept, by id).
 */
import { type Signal, signal } from "@preact/signals";
import { api, describe } from "../api.ts";
import type { TranscriptCursorPage, TranscriptMessage } from "../types.ts";

const PAGE = 50;
/** Beyond this many pages behind, the view starts again from the newest page. */
const MAX_CATCH_UP_PAGES = 10;

export interface TranscriptFeed {
  messages: Signal<TranscriptMessage[]>;
  hasMore: Signal<boolean>;
  error: Signal<string | null>;
  older(): Promise<void>;
  newer(): Promise<void>;
  /** Pages back until message `id` is shown (or the transcript has nothing older). */
  reach(id: number): Promise<void>;
}

export function createTranscriptFeed(sessionId: string): TranscriptFeed {
  const base = `/v1/sessions/${encodeURIComponent(sessionId)}/transcript/cursor`;
  const messages = signal<TranscriptMessage[]>([]);
  const hasMore = signal(false);
  const error = signal<string | null>(null);
  let reading: Promise<void> | null = null;
  let again = false;

  function merge(page: TranscriptCursorPage, older: boolean) {
    const known = new Set(messages.value.map((m) => m.id));
    const fresh = page.messages.filter((m) => !known.has(m.id));
    messages.value = older
      ? [...fresh, ...messages.value]
      : [...messages.value, ...fresh].sort((a, b) => a.id - b.id);
  }

  function restarted(page: TranscriptCursorPage): boolean {
    const shown = messages.value;
    if (shown.length === 0 || page.messages.length === 0) return false;
    if (page.newest_id < shown.at(-1)!.id) return true;
    const byId = new Map(shown.map((m) => [m.id, m.uuid]));
    return page.messages.some((m) => byId.has(m.id) && byId.get(m.id) !== m.uuid);
  }

  async function readNewest() {
    try {
      let page = await api<TranscriptCursorPage>(`${base}?limit=${PAGE}`);
      // A new transcript (after /clear the agent starts another file) numbers from 1 again: what
      // is shown belongs to the old one, and is replaced.
      if (restarted(page)) {
        messages.value = [];
        hasMore.value = page.has_more;
      }
      const last = messages.value.at(-1)?.id ?? 0;
      if (last === 0) hasMore.value = page.has_more;
      // More was written than one page holds: page back to what is shown, so nothing is skipped.
      for (let pages = 1; last > 0 && page.oldest_id > last + 1 && page.has_more; pages++) {
        if (pages > MAX_CATCH_UP_PAGES) {
          messages.value = [];
          hasMore.value = true;
          page = await api<TranscriptCursorPage>(`${base}?limit=${PAGE}`);
          break;
        }
        merge(page, false);
        page = await api<TranscriptCursorPage>(`${base}?limit=${PAGE}&before_id=${page.oldest_id}`);
      }
      merge(page, false);
      error.value = null;
    } catch (e) {
      error.value = `Could not read the transcript: ${describe(e)}`;
    }
  }

  /** Reads never overlap; one asked for meanwhile runs once after. */
  function newer(): Promise<void> {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        await readNewest();
      } while (again);
      reading = null;
    })();
    return reading;
  }

  async function older() {
    const oldest = messages.value[0]?.id;
    if (oldest === undefined) return;
    const page = await api<TranscriptCursorPage>(`${base}?limit=${PAGE}&before_id=${oldest}`);
    hasMore.value = page.has_more;
    merge(page, true);
  }

  return {
    messages,
    hasMore,
    error,
    older,
    async reach(id) {
      try {
        if (messages.value.length === 0) await newer();
        while (hasMore.value && (messages.value[0]?.id ?? 0) > id) await older();
      } catch (e) {
        error.value = `Could not read the transcript: ${describe(e)}`;
      }
    },
    newer,
  };
}

/**
 * The tool call a permission prompt is about, or null when the transcript does not say which:
 * among the calls with no result yet (of the prompt's tool), the one its detail names (the hook
 * gives the whole command or file path; the screen a shorter path), else the only one. With
 * parallel calls and none named, guessing could show one command while another is approved.
 */
export function pendingToolUse(
  messages: TranscriptMessage[],
  pending: { tool?: string; detail: string },
): TranscriptMessage | null {
  const answered = new Set(messages.filter((m) => m.kind === "tool_result").map((m) => m.toolUseId));
  const open = messages.filter(
    (m) =>
      m.kind === "tool_use" && !answered.has(m.toolUseId) && (!pending.tool || m.toolName === pending.tool),
  );
  const named = open.filter((m) => names(m, pending.detail));
  if (named.length > 0) return named[0]!;
  return open.length === 1 ? open[0]! : null;
}

/** Whether a prompt's detail names this call: its command, or its file (whole or the path's end). */
function names(call: TranscriptMessage, detail: string): boolean {
  const input = (call.toolInput ?? {}) as Record<string, unknown>;
  const wanted = detail.trim();
  if (!wanted) return false;
  for (const key of ["command", "file_path", "notebook_path", "path", "url", "pattern"]) {
    const value = input[key];
    if (typeof value !== "string" || !value) continue;
    if (value === wanted || (key !== "command" && value.endsWith(`/${wanted}`))) return true;
  }
  return false;
}
