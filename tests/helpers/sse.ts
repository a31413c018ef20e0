import { createEventBus, type EventBus } from "../../src/events/bus.ts";

/** One SSE block as a client sees it: a comment, or fields (`data` parsed as JSON when present). */
export interface SseMessage {
  comment?: string;
  id?: string;
  event?: string;
  data?: Record<string, unknown>;
}

/** Complete blocks of `text` (each ends with a blank line), and what is left of an unfinished one. */
export function parseSse(text: string): { messages: SseMessage[]; rest: string } {
  const blocks = text.split("\n\n");
  const rest = blocks.pop() ?? "";
  const messages = blocks.map((block) => {
    const message: SseMessage = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        message.comment = line.slice(1).trim();
        continue;
      }
      const colon = line.indexOf(":");
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") message.data = JSON.parse(value);
      else if (field === "id" || field === "event") message[field] = value;
    }
    return message;
  });
  return { messages, rest };
}

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

export interface SseReader {
  /** The messages already written, without waiting for more (in-process streams). */
  available(): Promise<SseMessage[]>;
  /** Waits for `count` more messages; fails after `guardMs` (a hang guard, not a measurement). */
  take(count: number, guardMs?: number): Promise<SseMessage[]>;
  /** Resolves when the stream ends: "done" when closed, "error" when reset. */
  ended(guardMs?: number): Promise<"done" | "error">;
  cancel(): Promise<void>;
}

export function sseReader(body: ReadableStream<Uint8Array>): SseReader {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending: Promise<ReadResult> | null = null;
  let text = "";
  const queue: SseMessage[] = [];

  function accept(result: ReadResult): boolean {
    pending = null;
    if (result.done) return false;
    const parsed = parseSse(text + decoder.decode(result.value, { stream: true }));
    text = parsed.rest;
    queue.push(...parsed.messages);
    return true;
  }

  async function readOnce(waitMs: number | "tick"): Promise<"data" | "idle" | "done"> {
    pending ??= reader.read();
    const idle = new Promise<null>((resolve) =>
      waitMs === "tick" ? setImmediate(() => resolve(null)) : setTimeout(() => resolve(null), waitMs),
    );
    const result = await Promise.race([pending, idle]);
    if (result === null) return "idle";
    return accept(result) ? "data" : "done";
  }

  return {
    async available() {
      while ((await readOnce("tick")) === "data") {}
      return queue.splice(0);
    },
    async take(count, guardMs = 5_000) {
      const deadline = Date.now() + guardMs;
      while (queue.length < count) {
        const left = deadline - Date.now();
        const outcome = left > 0 ? await readOnce(left) : "idle";
        if (outcome === "done") throw new Error(`stream ended after ${queue.length} of ${count} messages`);
        if (outcome === "idle") throw new Error(`only ${queue.length} of ${count} messages arrived`);
      }
      return queue.splice(0, count);
    },
    async ended(guardMs = 5_000) {
      const deadline = Date.now() + guardMs;
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error("the stream did not end");
        try {
          if ((await readOnce(left)) === "done") return "done";
        } catch {
          return "error";
        }
      }
    },
    cancel: () => reader.cancel(),
  };
}

/** The real bus, counting its live subscriptions (what a leak would leave behind). */
export function countingBus(bus: EventBus = createEventBus()): EventBus & { listeners(): number } {
  let listeners = 0;
  return {
    ...bus,
    subscribe(listener) {
      listeners++;
      const unsubscribe = bus.subscribe(listener);
      let once = true;
      return () => {
        if (once) listeners--;
        once = false;
        return unsubscribe();
      };
    },
    listeners: () => listeners,
  };
}
