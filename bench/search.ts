/**
 * Search at scale (docs/search.md, docs/benchmarks.md "Search"):
 * 1. writes `sizeMiB` of real-shaped transcripts in all four agents' formats — each a captured
 *    transcript of the real CLI (tests/fixtures: Claude Code, Codex, Gemini CLI, OpenCode through
 *    ag's plugin) with every text value replaced by generated prose of the same length (words
 *    drawn Zipf-like from a 20,000-word vocabulary), one conversation a file;
 * 2. indexes them all through the production path (each agent's TranscriptFormat, the cursor's
 *    TranscriptIndex, src/search's indexer and store) into a SQLite file: time, and the index's
 *    size as a share of the transcripts and of the text it holds;
 * 3. times `queries` searches (the service's search: MATCH, BM25, highlight, redacted snippets,
 *    limit 20) of mixed kinds: a common word, a rare word, two words, a phrase, a prefix, a filter;
 * 4. the delay from a transcript line written to its turn being searchable, on ag's real runtime:
 *    a headless session (the fake ACP agent), `lines` prompts, each line timed from the moment a
 *    file watch sees it in the transcript to the moment GET /v1/search finds it.
 *
 *   bun bench/search.ts [sizeMiB=1024] [queries=2000] [lines=20]
 *
 * Everything is written under the OS temp dir and deleted at the end.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgents } from "../src/agents/index.ts";
import { createEventBus } from "../src/events/bus.ts";
import { createSearchService, createSearchStore, type SearchQuery } from "../src/search/index.ts";
import { createLogger } from "../src/shared/log.ts";
import { openDatabase } from "../src/store/db.ts";
import { SEARCH_MIGRATIONS } from "../src/store/migrations.ts";
import { runCleanups } from "../tests/helpers/cleanup.ts";
import { callApi, startTestRuntime } from "../tests/helpers/runtime.ts";

const sizeMiB = Number(process.argv[2] ?? 1024);
const queryCount = Number(process.argv[3] ?? 2000);
const lineCount = Number(process.argv[4] ?? 20);
const MiB = 1024 * 1024;
const FIXTURES = join(import.meta.dir, "..", "tests", "fixtures");

const TEMPLATES = [
  { agent: "claude", file: join(FIXTURES, "transcripts", "sample.jsonl") },
  { agent: "codex", file: join(FIXTURES, "agents", "codex", "0.171.0", "rollout.jsonl") },
  { agent: "gemini", file: join(FIXTURES, "agents", "gemini", "0.61.0", "session.jsonl") },
  { agent: "opencode", file: join(FIXTURES, "agents", "opencode", "1.18.33", "conversation.jsonl") },
] as const;

// ── Prose: a Zipf-like vocabulary, deterministic ───────────────────────────────────────────────
let seed = 33;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const SYLLABLES = "ka lo mi nu re sa ti vo ze bra qui tor lin dex pa ro mu fe gal hen".split(" ");
const VOCABULARY = Array.from({ length: 20_000 }, (_, i) => {
  let word = "";
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
/** Rank r drawn with probability ∝ 1/r (Zipf, s = 1), by inverting the harmonic CDF approximately. */
const zipfWord = () =>
  VOCABULARY[
    Math.min(VOCABULARY.length - 1, Math.floor(Math.exp(random() * Math.log(VOCABULARY.length))) - 1)
  ]!;
function prose(chars: number): string {
  const words: string[] = [];
  for (let n = 0; n < chars; ) {
    const word = zipfWord();
    words.push(word);
    n += word.length + 1;
  }
  return words.join(" ").slice(0, Math.max(chars, 1));
}

/** The template with every "text"/"content"/"message" string value replaced by prose of its length. */
function variant(template: string): string {
  return template.replace(/"(text|content|message|output)":"((?:[^"\\]|\\.)*)"/g, (whole, key, value) =>
    value.length < 3 || /^(msg|prt)_/.test(value) ? whole : `"${key}":${JSON.stringify(prose(value.length))}`,
  );
}

// ── 1. Write ───────────────────────────────────────────────────────────────────────────────────
const root = mkdtempSync(join(tmpdir(), "ag-bench-search-"));
const files: Array<{ agent: string; path: string }> = [];
let written = 0;
const startedWriting = performance.now();
const templates = TEMPLATES.map((t) => ({ ...t, text: readFileSync(t.file, "utf8") }));
for (let i = 0; written < sizeMiB * MiB; i++) {
  const template = templates[i % templates.length]!;
  const dir = join(root, template.agent, String(Math.floor(i / 1000)));
  if (i % 1000 < templates.length) mkdirSync(dir, { recursive: true });
  const path = join(dir, `${i}.jsonl`);
  const body = variant(template.text);
  writeFileSync(path, body);
  written += Buffer.byteLength(body);
  files.push({ agent: template.agent, path });
}
console.log(
  `wrote ${files.length} conversations, ${(written / MiB).toFixed(0)} MiB, in ${((performance.now() - startedWriting) / 1000).toFixed(1)} s`,
);

// ── 2. Index ───────────────────────────────────────────────────────────────────────────────────
const dbPath = join(root, "search.db");
const db = openDatabase(dbPath, SEARCH_MIGRATIONS);
const store = createSearchStore(db);
const agents = createAgents(
  { home: root, dataDir: null, trustWorkdir: false, selfCommand: [], isRoot: false },
  { probe: async () => null, warn: () => {} },
);
const { createSourceIndexer } = await import("../src/search/indexer.ts");
const startedIndexing = performance.now();
for (const [i, file] of files.entries()) {
  const id = `${file.agent}:${i}`;
  store.upsertSource({
    id,
    origin: "external",
    agent: file.agent,
    host: "bench",
    workDir: `/work/project-${i % 50}`,
    tenantId: i % 2 ? "acme" : null,
    status: null,
    conversationId: String(i),
    title: null,
    path: file.path,
  });
  await createSourceIndexer(store, id, {
    path: file.path,
    format: agents.get(file.agent).transcript.format,
  }).catchUp();
}
const indexMs = performance.now() - startedIndexing;
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
const counts = store.counts();
const textBytes = db
  .query<{ n: number }, []>("SELECT sum(length(CAST(text AS BLOB))) AS n FROM search_turns")
  .get()!.n;
const dbBytes = statSync(dbPath).size;
console.log(
  `indexed ${counts.sources} conversations, ${counts.turns} turn parts, in ${(indexMs / 1000).toFixed(1)} s (${(written / MiB / (indexMs / 1000)).toFixed(1)} MiB/s)`,
);
console.log(
  `index ${(dbBytes / MiB).toFixed(1)} MiB = ${((100 * dbBytes) / written).toFixed(1)} % of the transcripts, ${(dbBytes / textBytes).toFixed(2)}× the ${(textBytes / MiB).toFixed(1)} MiB of text it holds`,
);

// ── 3. Query ───────────────────────────────────────────────────────────────────────────────────
const logger = createLogger({ level: "silent", json: true });
const service = createSearchService({
  store,
  repo: { get: () => null, list: () => [] },
  agents,
  bus: createEventBus({ logger }),
  logger,
  host: "bench",
  visibleSessions: () => [],
});
const pick = (from: number, to: number) => VOCABULARY[from + Math.floor(random() * (to - from))]!;
const KINDS: Array<[string, () => Omit<SearchQuery, "limit">]> = [
  ["common word", () => ({ q: pick(0, 20) })],
  ["mid word", () => ({ q: pick(100, 1000) })],
  ["rare word", () => ({ q: pick(5000, 20000) })],
  ["two words", () => ({ q: `${pick(0, 200)} ${pick(0, 200)}` })],
  ["phrase", () => ({ q: `"${pick(0, 50)} ${pick(0, 50)}"` })],
  ["prefix", () => ({ q: `${pick(0, 500).slice(0, 4)}*` })],
  ["word + agent, role", () => ({ q: pick(20, 500), agent: "codex", role: "answer" as const })],
  ["word + tenant, folder", () => ({ q: pick(20, 500), tenant: "acme", workDir: "/work/project-7" })],
];
const byKind = new Map<string, number[]>();
const all: number[] = [];
for (let i = 0; i < queryCount; i++) {
  const [kind, make] = KINDS[i % KINDS.length]!;
  const query = { ...make(), limit: 20 };
  const started = performance.now();
  service.search(query, { admin: true });
  const ms = performance.now() - started;
  all.push(ms);
  byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
}
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const line = (values: number[]) =>
  `p50 ${pct(values, 50).toFixed(2)} ms · p99 ${pct(values, 99).toFixed(2)} ms · max ${Math.max(...values).toFixed(1)} ms`;
console.log(`${queryCount} queries over ${counts.turns} turn parts: ${line(all)}`);
for (const [kind, values] of byKind) console.log(`  ${kind.padEnd(24)} ${line(values)}`);
service.stop();
db.close();
rmSync(root, { recursive: true, force: true });

// ── 4. Line → searchable, on ag's real runtime ─────────────────────────────────────────────────
const home = mkdtempSync(join(tmpdir(), "ag-bench-search-home-"));
const runtime = await startTestRuntime({}, { home });
try {
  const FAKE = join(import.meta.dir, "..", "tests", "fakes", "acp-agent.ts");
  const fakeState = join(home, "fake-agent");
  const created = await callApi<Record<string, string>>(runtime, "POST", "/v1/sessions", {
    workDir: home,
    agent: "gemini",
    driver: "acp",
    agentCommand: [process.execPath, FAKE, "--state", fakeState].join(" "),
    prompt: "warm up",
  });
  const id = created.body.id!;
  // ag's own transcript of the headless session: <stateDir>/sessions/<id>/acp-transcript.jsonl.
  const transcript = join(runtime.stateDir, "sessions", id, "acp-transcript.jsonl");
  const delays: number[] = [];
  /** A prompt is taken while the session is idle: wait for the turn before to end. */
  const idle = async () => {
    for (let waited = 0; waited < 30_000; waited += 10) {
      const { body } = await callApi<{ status: string }>(runtime, "GET", `/v1/sessions/${id}`);
      if (body.status === "idle") return;
      await Bun.sleep(10);
    }
    throw new Error(`session ${id} did not become idle`);
  };
  for (let i = 0; i < lineCount; i++) {
    await idle();
    const word = `linemark${i}x${Math.floor(random() * 1e6)}`;
    const seen = new Promise<number>((resolve) => {
      const watcher = watch(transcript, () => {
        if (readFileSync(transcript, "utf8").includes(`You said: ${word}`)) {
          watcher.close();
          resolve(performance.now());
        }
      });
    });
    await callApi(runtime, "POST", `/v1/sessions/${id}/send`, { text: word });
    const writtenAt = await seen;
    for (;;) {
      const { body } = await callApi<{ hits: unknown[] }>(runtime, "GET", `/v1/search?q=${word}&role=answer`);
      if (body.hits.length) break;
      await Bun.sleep(1);
    }
    delays.push(performance.now() - writtenAt);
  }
  console.log(`line → searchable over ${lineCount} answers: ${line(delays)}`);
  await callApi(runtime, "DELETE", `/v1/sessions/${id}`);
} finally {
  await runtime.drain(100);
  runtime.close();
  await runCleanups();
  rmSync(home, { recursive: true, force: true });
}
// Nothing of the run is left to wait for (an agent child a failed run left would keep Bun alive).
process.exit(0);
