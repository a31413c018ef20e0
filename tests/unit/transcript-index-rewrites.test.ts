import { describe, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LineReader, MessageRole, TranscriptFormat } from "../../src/transcript/cursor.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";
import { createTranscriptTail } from "../../src/transcript/tail.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * A toy format whose lines rewrite what they wrote (the index's generic `entries` reader):
 * `{"k": key, "r": role, "t": text}` upserts entry `key`; `{"copy": true}` … `{"end": true}`
 * brackets lines that copy entries already there (not entries); anything else is bookkeeping.
 */
const decoder = new TextDecoder();
const upserts: TranscriptFormat = {
  classify(line) {
    const record = JSON.parse(decoder.decode(line));
    return (record.r as MessageRole | undefined) ?? null;
  },
  toMessage(id, line, role) {
    const record = JSON.parse(line);
    return { id, role, kind: "text", text: record.t, timestamp: null, uuid: record.k };
  },
  entries(): LineReader {
    let copying = false;
    return (line) => {
      const record = JSON.parse(decoder.decode(line));
      if (record.copy) copying = true;
      if (record.end) copying = false;
      if (copying || !record.r) return null;
      return { role: record.r, key: record.k };
    };
  },
};

const line = (k: string, t: string, r: MessageRole = "assistant") => `${JSON.stringify({ k, r, t })}\n`;

function fileWith(text: string): string {
  const path = join(tempDir(), "rewrites.jsonl");
  writeFileSync(path, text);
  return path;
}

const textsOf = (page: { messages: { id: number; text: string }[] }) =>
  page.messages.map((m) => [m.id, m.text]);

describe("a format whose lines rewrite entries", () => {
  test("a rewritten entry keeps its id and place, and reads as its newest line", async () => {
    const path = fileWith(
      line("a", "ask", "user") + line("b", "draft") + `{"meta":1}\n` + line("c", "more") + line("b", "final"),
    );
    const index = createTranscriptIndex(path, upserts);
    await index.scan();
    expect(index.count).toBe(3);
    expect(textsOf(await index.page({ limit: 10 }))).toEqual([
      [1, "ask"],
      [2, "final"],
      [3, "more"],
    ]);
    expect(textsOf(await index.page({ limit: 10, role: "user" }))).toEqual([[1, "ask"]]);
  });

  test("lines between a copy's brackets are no entries", async () => {
    const path = fileWith(
      line("a", "one") + `{"copy":true}\n` + line("x", "copy of one") + `{"end":true}\n` + line("d", "two"),
    );
    const index = createTranscriptIndex(path, upserts);
    await index.scan();
    expect(textsOf(await index.page({ limit: 10 }))).toEqual([
      [1, "one"],
      [2, "two"],
    ]);
  });

  test("a page whose rewritten entry lies far after the entries that follow it reads every one", async () => {
    const filler = Array.from({ length: 400 }, (_, i) => line(`f${i}`, `${i} ${"·".repeat(300)}`)).join("");
    const path = fileWith(line("a", "first") + filler + line("a", "first, rewritten"));
    const index = createTranscriptIndex(path, upserts);
    await index.scan();
    const page = await index.page({ limit: 200, beforeId: 60 });
    expect(page.messages[0]).toMatchObject({ id: 1, text: "first, rewritten" });
    expect(page.messages.map((m) => m.id)).toEqual(Array.from({ length: 59 }, (_, i) => i + 1));
  });

  test("a tail feeding the index rewrites the same way as a scan", async () => {
    const path = fileWith(line("a", "ask", "user") + line("b", "draft"));
    const index = createTranscriptIndex(path, upserts);
    await index.scan();
    const tail = createTranscriptTail(path, { startOffset: index.end });
    appendFileSync(path, line("b", "final") + line("c", "next"));
    index.ingest(await tail.read());
    const scanned = createTranscriptIndex(path, upserts);
    await scanned.scan();
    expect(await index.page({ limit: 10 })).toEqual(await scanned.page({ limit: 10 }));
    expect(textsOf(await index.page({ limit: 10 }))).toEqual([
      [1, "ask"],
      [2, "final"],
      [3, "next"],
    ]);
  });

  test("a truncated file forgets the keys and the reader's state", async () => {
    const path = fileWith(line("a", "old") + `{"copy":true}\n`);
    const index = createTranscriptIndex(path, upserts);
    await index.scan();
    const tail = createTranscriptTail(path, { startOffset: index.end });
    writeFileSync(path, line("z", "new"));
    index.ingest(await tail.read());
    expect(textsOf(await index.page({ limit: 10 }))).toEqual([[1, "new"]]);
    appendFileSync(path, line("a", "not a rewrite"));
    expect(textsOf(await index.page({ limit: 10 }))).toEqual([
      [1, "new"],
      [2, "not a rewrite"],
    ]);
  });
});
