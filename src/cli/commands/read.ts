import { defineCommand } from "citty";
import type { TranscriptCursorPage } from "../../transcript/cursor.ts";
import { GLOBAL_ARGS, parseCountFlag, SESSION_ARG } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect } from "../connect.ts";
import { parseHit, sessionOfHit } from "../hits.ts";
import { colourEnabled, paint, plural, printJson, printLine } from "../output.ts";
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

/** The `limit` messages around message `at`: half before it, it, and the rest after. */
export async function readAround(client: ApiClient, id: string, at: number, limit: number) {
  const before = at + Math.ceil(limit / 2);
  return client.get<TranscriptCursorPage>(
    `${sessionPath(id, "transcript/cursor")}?limit=${limit}&before_id=${before}`,
  );
}

function printAround(result: TranscriptCursorPage, at: number, json: boolean) {
  if (json) return printJson(result);
  if (!result.messages.some((m) => m.id === at)) return printLine(`no message ${at}`);
  const colour = colourEnabled();
  printLine(`messages ${result.oldest_id}–${result.newest_id}, around ${at}`);
  for (const message of result.messages) {
    if (message.id !== at && isEmptyMessage(message)) continue;
    if (message.id === at) printLine(paint(`▶ message ${at}`, "bold", colour));
    for (const line of messageLines(message, colour)) printLine(line);
  }
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
    at: {
      type: "string",
      description: "The messages around this one (a search hit's message id); `<session>#<id>` says the same",
      valueHint: "id",
    },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const hit = parseHit(args.session);
    const limit = parseCountFlag("--limit", args.limit, hit || args.at ? 20 : 200, MAX_LIMIT);
    const { client } = connect(args);
    const id = await resolveSessionId(client, hit ? sessionOfHit(hit, "read") : args.session);
    const at = args.at !== undefined ? parseCountFlag("--at", args.at, 1) : hit?.messageId;
    if (at !== undefined) return printAround(await readAround(client, id, at, limit), at, args.json === true);
    const page = parseCountFlag("--page", args.page, 1);
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
