import { defineCommand } from "citty";
import type { TranscriptCursorPage } from "../../transcript/cursor.ts";
import { GLOBAL_ARGS, parseCountFlag, SESSION_ARG } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect } from "../connect.ts";
import { colourEnabled, plural, printJson, printLine } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";
import { isEmptyMessage, messageLines } from "../views.ts";

/** The transcript cursor serves at most this many messages at once. */
export const MAX_LIMIT = 200;

/**
 * Pages count back from the newest message: page 1 is the newest `limit` messages, page 2 the
 * `limit` before those, and so on; each page prints oldest first. The cursor's ids are ordinals
 * that never change as the transcript grows, so page N is "ids below newest − (N−1)·limit + 1".
 * Returns the cursor's before_id for page N, or null when page N lies before the first message.
 */
export function beforeIdOfPage(newestId: number, page: number, limit: number): number | null {
  const before = newestId - (page - 1) * limit + 1;
  return before > 1 ? before : null;
}

export interface ReadPage extends TranscriptCursorPage {
  page: number;
  limit: number;
  /** Messages in the transcript (the newest id). */
  total: number;
  pages: number;
}

export async function readPage(
  client: ApiClient,
  id: string,
  page: number,
  limit: number,
): Promise<ReadPage> {
  const path = sessionPath(id, "transcript/cursor");
  let result: TranscriptCursorPage;
  let total: number;
  if (page === 1) {
    result = await client.get<TranscriptCursorPage>(`${path}?limit=${limit}`);
    total = result.newest_id;
  } else {
    total = (await client.get<TranscriptCursorPage>(`${path}?limit=1`)).newest_id;
    const before = beforeIdOfPage(total, page, limit);
    result =
      before === null
        ? { messages: [], has_more: false, oldest_id: 0, newest_id: 0 }
        : await client.get<TranscriptCursorPage>(`${path}?limit=${limit}&before_id=${before}`);
  }
  return { ...result, page, limit, total, pages: Math.ceil(total / limit) };
}

/** `ag read <session>`: the session's messages, a page at a time; entries with nothing to read are left out. */
export default defineCommand({
  meta: { name: "read", description: "A session's messages, newest page first" },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    page: {
      type: "string",
      description: "Page, counted back from the newest (default 1)",
      valueHint: "number",
    },
    limit: {
      type: "string",
      description: `Messages per page, 1–${MAX_LIMIT} (default 200)`,
      valueHint: "number",
    },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const page = parseCountFlag("--page", args.page, 1);
    const limit = parseCountFlag("--limit", args.limit, 200, MAX_LIMIT);
    const { client } = connect(args);
    const id = await resolveSessionId(client, args.session);
    const result = await readPage(client, id, page, limit);
    if (args.json) return printJson(result);
    if (result.messages.length === 0) {
      return printLine(result.total === 0 ? "no messages yet" : `no page ${page}: ${result.pages} in all`);
    }
    const colour = colourEnabled();
    const shown = result.messages.filter((m) => !isEmptyMessage(m));
    const hidden = result.messages.length - shown.length;
    printLine(
      `messages ${result.oldest_id}–${result.newest_id} of ${result.total} · page ${page} of ${result.pages}${hidden ? ` · ${plural(hidden, "empty entry", "empty entries")} left out` : ""}`,
    );
    for (const message of shown) for (const line of messageLines(message, colour)) printLine(line);
    if (page < result.pages) printLine(`(older: ag read ${args.session} --page ${page + 1})`);
  },
});
