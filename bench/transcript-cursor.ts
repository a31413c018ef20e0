/**
 * Transcript cursor at scale: writes a synthetic Claude Code transcript (default 1 GiB) to a temp
 * dir, builds the ordinal index with one scan (cold and warm page cache), then times random cursor
 * pages and reports the index's memory. The file is deleted at the end.
 * `bun bench/transcript-cursor.ts [sizeMiB=1024] [pages=1000]`
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeTranscriptFormat } from "../src/agents/claude/transcript.ts";
import { createTranscriptIndex } from "../src/transcript/index.ts";

const sizeMiB = Number(process.argv[2] ?? 1024);
const pageCount = Number(process.argv[3] ?? 1000);

// ── A realistic transcript: turns of prompt, text, tool calls with results, bookkeeping ─────────

let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; // deterministic runs
  return seed / 2 ** 31;
};
const WORDS =
  'the a function const return value error file path test build type 👋 café — 日本 "q" \\ {x}'.split(" ");
/** Sizes skewed like real ones: mostly short, sometimes tens of KB. */
const size = (median: number) => Math.round(median * Math.exp((random() - 0.5) * 3));
function prose(chars: number): string {
  const parts: string[] = [];
  for (let n = 0; n < chars; ) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    parts.push(word, random() < 0.08 ? "\n" : " ");
    n += word.length + 1;
  }
  return parts.join("");
}

let n = 0;
const common = () => {
  n++;
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  return {
    parentUuid: id,
    isSidechain: false,
    userType: "external",
    entrypoint: "cli",
    cwd: "/srv/work/project",
    sessionId: "0b5e55ed-0000-4000-8000-000000000001",
    version: "2.1.197",
    gitBranch: "main",
    uuid: id,
    timestamp: new Date(1_795_000_000_000 + n * 1000).toISOString(),
  };
};
const usage = {
  input_tokens: 1800,
  cache_creation_input_tokens: 120,
  cache_read_input_tokens: 20242,
  output_tokens: 80,
};
const assistant = (id: string, block: unknown, stop: string) =>
  JSON.stringify({
    ...common(),
    type: "assistant",
    requestId: `req_${id}`,
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-opus-4-8",
      content: [block],
      stop_reason: stop,
      usage,
    },
  });
const attachment = () =>
  JSON.stringify({
    ...common(),
    type: "attachment",
    attachment: { type: "hook_success", hookEvent: "PostToolUse", stdout: "{}" },
  });

function turn(): string[] {
  const lines = [
    JSON.stringify({
      ...common(),
      type: "user",
      message: { role: "user", content: prose(size(120)) },
      promptSource: "typed",
      origin: { kind: "human" },
    }),
  ];
  lines.push(attachment());
  const msg = `msg_${n}`;
  if (random() < 0.3)
    lines.push(
      assistant(msg, { type: "thinking", thinking: prose(size(600)), signature: "c2ln" }, "tool_use"),
    );
  lines.push(assistant(msg, { type: "text", text: prose(size(500)) }, "tool_use"));
  for (let t = Math.floor(random() * 5); t > 0; t--) {
    const toolId = `toolu_${n}`;
    const write = random() < 0.4;
    const input = write
      ? { file_path: "/srv/work/project/src/a.ts", content: prose(size(2500)) }
      : { command: "bun test", description: "Run tests" };
    lines.push(
      assistant(
        `msg_${n}`,
        { type: "tool_use", id: toolId, name: write ? "Write" : "Bash", input },
        "tool_use",
      ),
    );
    lines.push(attachment());
    const output = prose(size(write ? 80 : 2000));
    lines.push(
      JSON.stringify({
        ...common(),
        type: "user",
        message: {
          role: "user",
          content: [{ tool_use_id: toolId, type: "tool_result", content: output, is_error: random() < 0.05 }],
        },
        toolUseResult: { stdout: output, stderr: "", interrupted: false },
      }),
    );
  }
  lines.push(assistant(`msg_${n}`, { type: "text", text: prose(size(700)) }, "end_turn"));
  lines.push(
    JSON.stringify({
      ...common(),
      type: "system",
      subtype: "turn_duration",
      durationMs: 4000,
      messageCount: n,
    }),
  );
  lines.push(
    JSON.stringify({
      type: "file-history-snapshot",
      messageId: `m${n}`,
      snapshot: { trackedFileBackups: {} },
    }),
  );
  return lines;
}

async function writeTranscript(path: string, bytes: number) {
  // A pool of distinct turns, written over and over: generating 1 GiB of fresh JSON would
  // measure JSON.stringify, not the index.
  const pool = Array.from({ length: 400 }, () => `${turn().join("\n")}\n`);
  const writer = Bun.file(path).writer({ highWaterMark: 8 * 1024 * 1024 });
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const wrote = writer.write(pool[i % pool.length]!);
    written += typeof wrote === "number" ? wrote : await wrote; // a promise = back-pressure
  }
  await writer.end();
  return written;
}

// ── Measure ─────────────────────────────────────────────────────────────────────────────────────

const dir = mkdtempSync(join(tmpdir(), "ag-bench-transcript-"));
const path = join(dir, "transcript.jsonl");
try {
  let started = performance.now();
  const bytes = await writeTranscript(path, sizeMiB * 1024 * 1024);
  const mib = bytes / 1024 / 1024;
  console.log(`wrote ${mib.toFixed(0)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const cold = await dropFromPageCache(path);
  Bun.gc(true);
  const rssBefore = process.memoryUsage().rss;
  const index = createTranscriptIndex(path, claudeTranscriptFormat);
  const scan = await index.scan();
  const rate = (ms: number) => `${ms.toFixed(0)} ms = ${(mib / (ms / 1000)).toFixed(0)} MiB/s`;
  console.log(
    `index build, one scan (${cold ? "cold" : "warm"} page cache): ${rate(scan.ms)}; ${index.count} entries`,
  );
  Bun.gc(true);
  const rssIndex = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
  const arrays = (index.memoryBytes / 1024 / 1024).toFixed(1);
  console.log(
    `index memory: arrays ${arrays} MiB for ${index.count} entries; process RSS +${rssIndex.toFixed(1)} MiB`,
  );

  const warm = createTranscriptIndex(path, claudeTranscriptFormat);
  console.log(`index build, one scan (warm page cache): ${rate((await warm.scan()).ms)}`);

  const times = async (label: string, role?: "user" | "assistant" | "system") => {
    const samples: number[] = [];
    for (let i = 0; i < pageCount; i++) {
      const beforeId = 51 + Math.floor(random() * (index.count - 50));
      started = performance.now();
      const page = await index.page({ beforeId, limit: 50, role });
      samples.push(performance.now() - started);
      if (page.messages.length !== 50) throw new Error(`short page at ${beforeId}`);
    }
    samples.sort((a, b) => a - b);
    const at = (q: number) =>
      samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.toFixed(2);
    console.log(
      `${pageCount} random pages, limit 50, ${label}: p50 ${at(0.5)} ms · p99 ${at(0.99)} ms · max ${at(1)} ms`,
    );
  };
  await times("warm page cache");
  await times("role=user, warm", "user");
  if (await dropFromPageCache(path)) await times("cold page cache (file evicted first)");
  console.log(`peak RSS of the bench process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Evicts the file from the page cache (GNU dd's nocache), so a scan reads from disk. */
async function dropFromPageCache(file: string): Promise<boolean> {
  const proc = Bun.spawn(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"], {
    stderr: "ignore",
  });
  return (await proc.exited) === 0;
}
