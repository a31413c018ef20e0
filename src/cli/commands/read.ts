import { defineCommand } from "citty";
import type { TranscriptCursorPage } from "../../transcript/cursor.ts";
import { GLOBAL_ARGS, parseCountFlag, SESSION_ID_ARG } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect, resolveSessionId } from "../connect.ts";
import { colourEnabled, printJson, printLine } from "../output.ts";
import { messageLines } from "../views.ts";

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
  const path = `/v1/sessions/${encodeURIComponent(id)}/transcript/cursor`;
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

/** `ag read <id>`: the session's messages, a page at a time. */
export default defineCommand({
  meta: { name: "read", description: "A session's messages, newest page first" },
  args: {
    ...GLOBAL_ARGS,
    id: SESSION_ID_ARG,
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
    const id = await resolveSessionId(client, args.id);
    const result = await readPage(client, id, page, limit);
    if (args.json) return printJson(result);
    if (result.messages.length === 0) {
      return printLine(result.total === 0 ? "no messages yet" : `no page ${page}: ${result.pages} in all`);
    }
    const colour = colourEnabled();
    printLine(
      `messages ${result.oldest_id}–${result.newest_id} of ${result.total} · page ${page} of ${result.pages}`,
    );
    for (const message of result.messages) for (const line of messageLines(message, colour)) printLine(line);
    if (page < result.pages) printLine(`(older: ag read ${args.id} --page ${page + 1})`);
  },
});
