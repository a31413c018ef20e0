/**
 * What a Prometheus scrape of `/metrics` costs with many sessions: N session records, each with a
 * Claude Code transcript of M assistant messages, in a temp dir. Times the first scrape (reads
 * every transcript whole), steady scrapes (nothing new: one stat per transcript), and a scrape
 * after one new message in every transcript. The files are deleted at the end.
 * `bun bench/metrics-scrape.ts [sessions=50] [messages=2000] [scrapes=50]`
 */
import { Database } from "bun:sqlite";
import { appendFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLAUDE_PRICES as DEFAULT_PRICES } from "../src/agents/claude/prices.ts";
import { createAgents } from "../src/agents/index.ts";
import { createMetricsRecorder, createMetricsService } from "../src/metrics/index.ts";
import { newRecord } from "../src/sessions/lifecycle.ts";
import { createSessionRepo } from "../src/sessions/repo.ts";
import { systemClock } from "../src/shared/clock.ts";
import { createLogger } from "../src/shared/log.ts";
import { migrate } from "../src/store/db.ts";
import { MIGRATIONS } from "../src/store/migrations.ts";

const sessions = Number(process.argv[2] ?? 50);
const messages = Number(process.argv[3] ?? 2000);
const scrapes = Number(process.argv[4] ?? 50);

const dir = mkdtempSync(join(tmpdir(), "ag-bench-metrics-"));
let next = 0;
function assistant(): string {
  next++;
  return `${JSON.stringify({
    type: "assistant",
    uuid: `00000000-0000-4000-8000-${String(next).padStart(12, "0")}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: {
      id: `msg_${next}`,
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "a reply of a realistic length ".repeat(20) }],
      stop_reason: "end_turn",
      usage: {
        input_tokens: 1800,
        output_tokens: 80,
        cache_read_input_tokens: 20242,
        cache_creation_input_tokens: 120,
      },
    },
  })}\n`;
}

try {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  const paths: string[] = [];
  for (let s = 0; s < sessions; s++) {
    const path = join(dir, `session-${s}.jsonl`);
    let text = "";
    for (let m = 0; m < messages; m++) text += assistant();
    appendFileSync(path, text);
    paths.push(path);
    const record = newRecord({
      id: crypto.randomUUID(),
      name: `s${s}`,
      workDir: dir,
      agent: "claude",
      agentCommand: null,
      permissionMode: "default",
      stallThresholdMs: 120_000,
      now: Date.now(),
    });
    repo.insert({ ...record, status: "idle", transcriptPath: path });
  }
  const bytes = paths.reduce((sum, p) => sum + statSync(p).size, 0);
  const metrics = createMetricsService({
    repo,
    agents: createAgents(
      { home: dir, dataDir: null, trustWorkdir: false, selfCommand: ["ag"], isRoot: false },
      { probe: async () => null },
    ),
    recorder: createMetricsRecorder(),
    clock: systemClock,
    logger: createLogger({ level: "silent", json: true }),
    prices: DEFAULT_PRICES,
    version: "bench",
    startedAt: Date.now(),
  });
  const time = async () => {
    const started = performance.now();
    const text = await metrics.prometheus();
    return { ms: performance.now() - started, text };
  };

  const first = await time();
  const steady: number[] = [];
  for (let i = 0; i < scrapes; i++) steady.push((await time()).ms);
  steady.sort((a, b) => a - b);
  for (const path of paths) appendFileSync(path, assistant());
  const appended = await time();
  const tokens = /ag_tokens_total\{type="output"\} (\d+)/.exec(appended.text)?.[1];
  console.log(
    `${sessions} sessions × ${messages} messages (${(bytes / 2 ** 20).toFixed(1)} MiB of transcripts)`,
  );
  console.log(`first scrape (reads everything)   ${first.ms.toFixed(1)} ms`);
  console.log(
    `steady scrape (nothing new)        p50 ${steady[Math.floor(steady.length / 2)]!.toFixed(2)} ms · max ${steady.at(-1)!.toFixed(2)} ms`,
  );
  console.log(`after one new message per session ${appended.ms.toFixed(2)} ms`);
  console.log(`output tokens counted ${tokens} (expected ${sessions * (messages + 1) * 80})`);
  console.log(`RSS ${(process.memoryUsage.rss() / 2 ** 20).toFixed(1)} MiB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
