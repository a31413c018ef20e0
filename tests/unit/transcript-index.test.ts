import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeTranscriptFormat } from "../../src/agents/claude/transcript.ts";
import { AgError } from "../../src/shared/errors.ts";
import { type MessageRole, topLevelString } from "../../src/transcript/cursor.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";
import { createTranscriptTail } from "../../src/transcript/tail.ts";
import { tempDir } from "../helpers/temp.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/transcripts");

/** Message entry #k says "entry k" in its text; bookkeeping lines sit between them. */
function entryLine(k: number, role: MessageRole): string {
  if (role === "system")
    return JSON.stringify({ type: "system", subtype: "informational", content: `entry ${k}`, uuid: `u${k}` });
  const content = role === "user" ? `entry ${k} ✓` : [{ type: "text", text: `entry ${k} — 日本` }];
  return JSON.stringify({ type: role, message: { id: `msg_${k}`, role, content }, uuid: `u${k}` });
}
const ROLE_CYCLE: MessageRole[] = ["user", "assistant", "assistant", "system", "assistant"];
const roleOf = (k: number) => ROLE_CYCLE[(k - 1) % ROLE_CYCLE.length]!;

function writeEntries(path: string, from: number, to: number) {
  let text = "";
  for (let k = from; k <= to; k++) {
    text += `${entryLine(k, roleOf(k))}\n`;
    if (k % 3 === 0)
      text += `${JSON.stringify({ type: "attachment", attachment: { type: "user" }, n: k })}\n`;
    if (k % 7 === 0) text += `{"type":"file-history-snapshot","snapshot":{"type":"assistant"}}\n`;
  }
  appendFileSync(path, text);
}

async function indexOf(count: number, options: { chunkBytes?: number } = {}) {
  const path = join(tempDir(), "t.jsonl");
  writeFileSync(path, "");
  writeEntries(path, 1, count);
  const index = createTranscriptIndex(path, claudeTranscriptFormat, options);
  await index.scan();
  return { path, index };
}

const idsOf = (page: { messages: { id: number }[] }) => page.messages.map((m) => m.id);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("transcript cursor index", () => {
  test("numbers message entries 1.. and skips bookkeeping lines", async () => {
    const { index } = await indexOf(300);
    expect(index.count).toBe(300);
    const page = await index.page({ limit: 5 });
    expect(idsOf(page)).toEqual([296, 297, 298, 299, 300]);
    for (const m of page.messages) expect(m.text).toStartWith(`entry ${m.id}`);
    expect(page).toMatchObject({ has_more: true, oldest_id: 296, newest_id: 300 });
  });

  test("paging backwards with oldest_id visits every entry once", async () => {
    const { index } = await indexOf(437);
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await index.page({ beforeId: before, limit: 37 });
      expect(idsOf(page)).toEqual(range(page.oldest_id, page.newest_id)); // oldest first, contiguous
      seen.unshift(...idsOf(page));
      if (!page.has_more) break;
      before = page.oldest_id;
    }
    expect(seen).toEqual(range(1, 437));
  });

  test("a role filter keeps the ids and pages through that role only", async () => {
    const { index } = await indexOf(300);
    const users = range(1, 300).filter((k) => roleOf(k) === "user");
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await index.page({ beforeId: before, limit: 16, role: "user" });
      for (const m of page.messages) expect(m).toMatchObject({ role: "user", text: `entry ${m.id} ✓` });
      seen.unshift(...idsOf(page));
      if (!page.has_more) break;
      before = page.oldest_id;
    }
    expect(seen).toEqual(users);
    const systems = await index.page({ beforeId: 10, limit: 200, role: "system" });
    expect(idsOf(systems)).toEqual([4, 9]);
    expect(systems.has_more).toBe(false);
  });

  test("ids stay put when lines are appended", async () => {
    const { path, index } = await indexOf(120);
    const before = await index.page({ beforeId: 100, limit: 50 });
    writeEntries(path, 121, 180);
    expect(await index.page({ beforeId: 100, limit: 50 })).toEqual(before);
    const newest = await index.page({ limit: 10 });
    expect(idsOf(newest)).toEqual(range(171, 180)); // the page caught up by itself
    expect(newest.messages.at(-1)!.text).toStartWith("entry 180");
  });

  test("a tail started at `end` feeds the index without duplicates", async () => {
    const { path, index } = await indexOf(50);
    const tail = createTranscriptTail(path, { startOffset: index.end });
    writeEntries(path, 51, 60);
    index.ingest(await tail.read());
    expect(index.count).toBe(60);
    await index.scan(); // nothing left to add
    expect(index.count).toBe(60);
    expect(idsOf(await index.page({ limit: 3 }))).toEqual([58, 59, 60]);
  });

  test("limit and before_id bounds", async () => {
    const { index } = await indexOf(250);
    expect(idsOf(await index.page({ limit: 1 }))).toEqual([250]);
    expect((await index.page({ limit: 200 })).messages).toHaveLength(200);
    expect(idsOf(await index.page({ beforeId: 3, limit: 200 }))).toEqual([1, 2]);
    expect(idsOf(await index.page({ beforeId: 10_000, limit: 2 }))).toEqual([249, 250]);
    for (const query of [{ limit: 0 }, { limit: 201 }, { limit: 1.5 }, { limit: 5, beforeId: 0 }]) {
      const error = await index.page(query).catch((e) => e);
      expect(error).toBeInstanceOf(AgError);
      expect(error.code).toBe("VALIDATION_ERROR");
    }
  });

  test("an empty page: no messages, has_more false, ids 0", async () => {
    const empty = { messages: [], has_more: false, oldest_id: 0, newest_id: 0 };
    const { index } = await indexOf(10);
    expect(await index.page({ beforeId: 1, limit: 50 })).toEqual(empty);
    expect(await index.page({ beforeId: 4, limit: 50, role: "system" })).toEqual(empty);
    const missing = createTranscriptIndex(join(tempDir(), "none.jsonl"), claudeTranscriptFormat);
    expect(await missing.page({ limit: 50 })).toEqual(empty);
  });

  test("lines longer than a read chunk index the same", async () => {
    const small = await indexOf(40, { chunkBytes: 64 });
    const large = await indexOf(40);
    expect(small.index.count).toBe(40);
    expect(await small.index.page({ limit: 40 })).toEqual(await large.index.page({ limit: 40 }));
  });

  test("a truncated tail read restarts the numbering", async () => {
    const { path, index } = await indexOf(30);
    const tail = createTranscriptTail(path, { startOffset: index.end });
    writeFileSync(path, "");
    writeEntries(path, 1, 4);
    const read = await tail.read();
    expect(read.truncated).toBe(true);
    index.ingest(read);
    expect(index.count).toBe(4);
    expect(idsOf(await index.page({ limit: 50 }))).toEqual([1, 2, 3, 4]);
  });

  test("a rewritten file is re-indexed from the start", async () => {
    const { path, index } = await indexOf(100);
    writeFileSync(path, readFileSync(join(FIXTURES, "multibyte.jsonl")));
    const page = await index.page({ limit: 50 });
    expect(page.messages.map((m) => [m.id, m.kind])).toEqual([
      [1, "prompt"],
      [2, "text"],
      [3, "system"],
    ]);
    expect(page.messages[0]!.text).toBe("héllo wörld — 你好 👋🏽 ñ");
  });

  test("the sample transcript: 61 message entries, roles as written", async () => {
    const index = createTranscriptIndex(join(FIXTURES, "sample.jsonl"), claudeTranscriptFormat);
    expect(await index.scan()).toMatchObject({ entries: 61, bytes: 80368 });
    const counts = { user: 0, assistant: 0, system: 0 };
    for (const role of ["user", "assistant", "system"] as const)
      counts[role] = (await index.page({ limit: 200, role })).messages.length;
    expect(counts).toEqual({ user: 22, assistant: 21, system: 18 });
  });
});

describe("top-level JSON field without parsing", () => {
  const type = new TextEncoder().encode("type");
  const read = (json: string) => {
    const value = topLevelString(new TextEncoder().encode(json), type);
    return value && new TextDecoder().decode(value);
  };

  test("finds the top-level key, never a nested one", () => {
    expect(read('{"message":{"type":"message","content":[{"type":"text"}]},"type":"assistant"}')).toBe(
      "assistant",
    );
    expect(read('{"data":{"message":{"type":"user"}},"type":"progress"}')).toBe("progress");
    expect(read('{"attachment":{"type":"system"}}')).toBeNull();
  });

  test("strings with quotes, escapes and brackets do not confuse it", () => {
    expect(read('{"text":"a \\"type\\":\\"user\\" {[","type":"system"}')).toBe("system");
    expect(read('{"text":"ends in a backslash \\\\","type":"user"}')).toBe("user");
    expect(read('{"kind":"type","type" : "user"}')).toBe("user");
    expect(read('{"type":42}')).toBeNull();
    expect(read('{"type":"us')).toBeNull();
  });
});
