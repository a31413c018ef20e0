import type { TranscriptCursorPage } from "../transcript/cursor.ts";

/**
 * What `ag acp` needs of the running ag server: its REST API (JSON in and out, errors thrown as
 * AgError with the server's code) and its event stream. The CLI passes its own client in.
 */
export interface AgApi {
  get<T>(path: string): Promise<T>;
  send<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/** One event of the server's SSE stream, as much of it as the editor side reads. */
export interface FeedEvent {
  event: string;
  session?: { id: string };
  detail: string;
  meta: Record<string, unknown>;
}

/**
 * The server's event stream, opened once for all the process's sessions. `subscribe` returns the
 * way to stop listening; `opened` settles once the server holds the subscription (nothing
 * published after it is missed).
 */
export interface EventFeed {
  subscribe(listener: (event: FeedEvent) => void): () => void;
  opened: Promise<void>;
}

export type CursorPage = TranscriptCursorPage;
