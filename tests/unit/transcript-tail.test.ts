import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  chownSync,
  type FSWatcher,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  watch,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { claudeTranscriptFormat } from "../../src/agents/claude/transcript.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";
import { createTranscriptTail, type TailLine, watchTranscript } from "../../src/transcript/tail.ts";
import { tempDir } from "../helpers/temp.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/transcripts");
const fixture = (name: string) => readFileSync(join(FIXTURES, name));

/** The text at [offset, offset + length) of the file: what a line's offset must point at. */
function textAt(path: string, line: TailLine): string {
  return new TextDecoder().decode(readFileSync(path).subarray(line.offset, line.offset + line.length));
}

describe("transcript tail", () => {
  test("returns each appended line once, in order, with its byte offset", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, '{"n":1}\n{"n":2}\n');
    const tail = createTranscriptTail(path);
    const first = await tail.read();
    expect(first.lines.map((l) => l.text)).toEqual(['{"n":1}', '{"n":2}']);
    expect(first.lines.map((l) => l.offset)).toEqual([0, 8]);
    appendFileSync(path, '{"n":3}\n');
    appendFileSync(path, '{"n":"ünï"}\n');
    appendFileSync(path, '{"n":5}\n');
    const second = await tail.read();
    expect(second.lines.map((l) => l.text)).toEqual(['{"n":3}', '{"n":"ünï"}', '{"n":5}']);
    for (const line of second.lines) expect(textAt(path, line)).toBe(line.text);
    expect((await tail.read()).lines).toEqual([]);
    expect(tail.offset).toBe(readFileSync(path).length);
  });

  test("keeps a partial last line until its newline arrives", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, '{"a":1}\n{"b":');
    const tail = createTranscriptTail(path);
    expect((await tail.read()).lines.map((l) => l.text)).toEqual(['{"a":1}']);
    expect(tail.offset).toBe(8);
    appendFileSync(path, "2");
    expect((await tail.read()).lines).toEqual([]);
    appendFileSync(path, "}\n");
    const [line] = (await tail.read()).lines;
    expect(line).toMatchObject({ offset: 8, length: 7, text: '{"b":2}' });
  });

  test("a multi-byte character split across reads arrives whole", async () => {
    const path = join(tempDir(), "t.jsonl");
    const bytes = fixture("multibyte.jsonl");
    writeFileSync(path, "");
    const tail = createTranscriptTail(path);
    const seen: string[] = [];
    // Chunks of 1–7 bytes cut through 2-, 3- and 4-byte characters many times over.
    for (let at = 0, size = 1; at < bytes.length; at += size, size = (size % 7) + 1) {
      appendFileSync(path, bytes.subarray(at, at + size));
      for (const line of (await tail.read()).lines) seen.push(line.text);
    }
    expect(seen).toEqual(bytes.toString("utf8").trimEnd().split("\n"));
    expect(seen.join("")).not.toContain("\uFFFD");
  });

  test("a line cut inside a character is completed later", async () => {
    const path = join(tempDir(), "t.jsonl");
    const whole = fixture("multibyte.jsonl"); // partial.jsonl is its first bytes, cut inside "日"
    const partial = fixture("partial.jsonl");
    const lines = whole.toString("utf8").trimEnd().split("\n");
    writeFileSync(path, partial);
    const tail = createTranscriptTail(path);
    expect((await tail.read()).lines.map((l) => l.text)).toEqual(lines.slice(0, 2));
    appendFileSync(path, whole.subarray(partial.length));
    expect((await tail.read()).lines.map((l) => l.text)).toEqual(lines.slice(2));
  });

  test("a file that shrank restarts at 0 and says so", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, fixture("sample.jsonl"));
    const tail = createTranscriptTail(path);
    expect((await tail.read()).lines).toHaveLength(113);
    writeFileSync(path, fixture("multibyte.jsonl"));
    const after = await tail.read();
    expect(after.truncated).toBe(true);
    expect(after.lines[0]!.offset).toBe(0);
    expect(after.lines.map((l) => l.text)).toEqual(
      fixture("multibyte.jsonl").toString().trimEnd().split("\n"),
    );
    expect((await tail.read()).truncated).toBe(false);
  });

  test("a file replaced by another (even a longer one) restarts at 0", async () => {
    const dir = tempDir();
    const path = join(dir, "t.jsonl");
    writeFileSync(path, '{"old":1}\n');
    const tail = createTranscriptTail(path);
    await tail.read();
    writeFileSync(join(dir, "new.jsonl"), '{"new":1}\n{"new":2}\n');
    renameSync(join(dir, "new.jsonl"), path);
    const after = await tail.read();
    expect(after.truncated).toBe(true);
    expect(after.lines.map((l) => l.text)).toEqual(['{"new":1}', '{"new":2}']);
  });

  test("a missing file reads as empty until it appears", async () => {
    const path = join(tempDir(), "later.jsonl");
    const tail = createTranscriptTail(path);
    expect(await tail.read()).toEqual({ lines: [], truncated: false, more: false });
    writeFileSync(path, '{"x":1}\n');
    expect((await tail.read()).lines.map((l) => l.text)).toEqual(['{"x":1}']);
  });

  test("starts at startOffset, and reads a large backlog in bounded steps", async () => {
    const path = join(tempDir(), "t.jsonl");
    const sample = fixture("sample.jsonl");
    writeFileSync(path, sample);
    const lines = sample.toString().trimEnd().split("\n");
    const skip = Buffer.byteLength(`${lines.slice(0, 100).join("\n")}\n`);
    const tail = createTranscriptTail(path, { startOffset: skip, maxBytes: 1024 });
    const seen: string[] = [];
    let reads = 0;
    for (let more = true; more; reads++) {
      const read = await tail.read();
      seen.push(...read.lines.map((l) => l.text));
      more = read.more;
    }
    expect(seen).toEqual(lines.slice(100));
    expect(reads).toBeGreaterThan(1);
  });

  test("overlapping reads never return a line twice", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, fixture("sample.jsonl"));
    const tail = createTranscriptTail(path);
    const reads = await Promise.all([tail.read(), tail.read(), tail.read()]);
    expect(reads.flatMap((r) => r.lines).length).toBe(113);
  });
});

/** Resolves on the next callback, or rejects after `ms`. */
function nextCall(ms = 2000) {
  let resolve!: () => void;
  const called = new Promise<void>((r) => {
    resolve = r;
  });
  const timeout = Bun.sleep(ms).then(() => {
    throw new Error("no change reported");
  });
  return { onChange: () => resolve(), wait: () => Promise.race([called, timeout]) };
}

describe("watching a transcript", () => {
  test("a write to the file calls back", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, "");
    const call = nextCall();
    const stop = watchTranscript(path, call.onChange);
    try {
      appendFileSync(path, '{"n":1}\n');
      await call.wait();
    } finally {
      stop();
    }
  });

  test("works before the file and its folder exist", async () => {
    const root = tempDir();
    const path = join(root, "projects", "-srv-work", "s.jsonl");
    const call = nextCall();
    const stop = watchTranscript(path, call.onChange);
    try {
      await Bun.sleep(20);
      mkdirSync(join(root, "projects"));
      await Bun.sleep(20);
      mkdirSync(join(root, "projects", "-srv-work"));
      await Bun.sleep(20);
      writeFileSync(path, '{"n":1}\n');
      await call.wait();
    } finally {
      stop();
    }
  });

  test("a folder created between looking and watching is not missed", async () => {
    const root = tempDir();
    const path = join(root, "projects", "-srv-work", "s.jsonl");
    const call = nextCall();
    let raced = false;
    // The agent creates the folders and writes its first line just as the ancestor is watched:
    // the creation happens before the watch exists, so no event will ever tell of it.
    const racingWatch = ((dir: string, ...rest: unknown[]) => {
      if (!raced) {
        raced = true;
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, '{"n":1}\n');
      }
      return (watch as (...args: unknown[]) => FSWatcher)(dir, ...rest);
    }) as typeof watch;
    const stop = watchTranscript(path, call.onChange, { watch: racingWatch });
    try {
      await call.wait();
      expect(raced).toBe(true);
    } finally {
      stop();
    }
  });

  test("other files in the folder and writes after stop are ignored", async () => {
    const dir = tempDir();
    const path = join(dir, "t.jsonl");
    writeFileSync(path, "");
    let calls = 0;
    const stop = watchTranscript(path, () => calls++, { debounceMs: 5 });
    writeFileSync(join(dir, "other.jsonl"), "x\n");
    await Bun.sleep(100);
    expect(calls).toBe(0);
    stop();
    appendFileSync(path, "y\n");
    await Bun.sleep(100);
    expect(calls).toBe(0);
  });

  test("a burst of writes is reported once (debounced)", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, "");
    let calls = 0;
    const stop = watchTranscript(path, () => calls++, { debounceMs: 50 });
    for (let i = 0; i < 20; i++) appendFileSync(path, `{"n":${i}}\n`);
    await Bun.sleep(200);
    stop();
    expect(calls).toBe(1);
  });
});

describe("a transcript that must be its agent's user's (runAs)", () => {
  // The tests chown files to a uid that runs nothing here; only root may (CI runs as root).
  const asRoot = process.getuid?.() === 0;
  const OTHER = 54_321;
  const line = (text: string) => `${JSON.stringify({ type: "user", text })}\n`;

  test.if(asRoot)("the agent's own file is read; another uid's file, named or linked, is not", async () => {
    const dir = tempDir();
    const own = join(dir, "own.jsonl");
    const theirs = join(dir, "theirs.jsonl");
    writeFileSync(own, line("mine"));
    writeFileSync(theirs, line("another tenant's"));
    chownSync(theirs, OTHER, OTHER);
    expect((await createTranscriptTail(own, { owner: 0 }).read()).lines).toHaveLength(1);
    await expect(createTranscriptTail(theirs, { owner: 0 }).read()).rejects.toThrow(/owned by uid 54321/);
    // Without an owner (ag's own uid runs the agent) nothing is checked, as before.
    expect((await createTranscriptTail(theirs).read()).lines).toHaveLength(1);
    const index = createTranscriptIndex(theirs, claudeTranscriptFormat, { owner: 0 });
    await expect(index.scan()).rejects.toThrow(/owned by uid 54321/);
  });

  test.if(asRoot)(
    "a name swapped for a link to another uid's file after it was read reads nothing of it",
    async () => {
      const dir = tempDir();
      const path = join(dir, "t.jsonl");
      const theirs = join(dir, "theirs.jsonl");
      writeFileSync(path, line("one"));
      writeFileSync(theirs, line("secret one") + line("secret two"));
      chownSync(theirs, OTHER, OTHER);
      const tail = createTranscriptTail(path, { owner: 0 });
      expect((await tail.read()).lines.map((l) => l.text)).toEqual([line("one").trim()]);
      rmSync(path);
      symlinkSync(theirs, path);
      await expect(tail.read()).rejects.toThrow(/not read/);
    },
  );
});
