/**
 * ag's CPU while a busy session streams, with the search index following it and without
 * (docs/search.md, docs/benchmarks.md "Search: ag's CPU"). Two runs of ag's real runtime in this
 * process, one after the other, alike but for the index: in the "off" run the search service is
 * stopped right after the start (nothing follows the session's transcript for search). In each, a
 * headless session (the fake ACP agent, a child process: its CPU is not ag's) takes `turns`
 * prompts back to back, each of `chars` characters, which it answers with the same text: a
 * prompt line and an answer line in its transcript a turn, as fast as ag and the agent go. ag's
 * CPU is this process's (user + system) over the turns, against their wall time.
 *
 *   bun bench/search-cpu.ts [turns=200] [chars=2000] [rounds=2]
 *
 * Rounds alternate off and on (off, on, off, on …) so that a machine busy with other work weighs
 * on both alike. Everything is written under the OS temp dir and deleted at the end.
 */
import { join } from "node:path";
import { runCleanups } from "../tests/helpers/cleanup.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../tests/helpers/runtime.ts";
import { tempDir } from "../tests/helpers/temp.ts";

const turns = Number(process.argv[2] ?? 200);
const chars = Number(process.argv[3] ?? 2000);
const rounds = Number(process.argv[4] ?? 2);
const FAKE = join(import.meta.dir, "..", "tests", "fakes", "acp-agent.ts");
const TURN_TIMEOUT_MS = 30_000;

const WORDS = "index follows the transcript as the busy session streams its long answers".split(" ");
const prose = (n: number, turn: number) => {
  let text = `turn ${turn}:`;
  for (let i = 0; text.length < n; i++) text += ` ${WORDS[(i * 7 + turn) % WORDS.length]}`;
  return text.slice(0, n);
};

/** Resolves at the session's next `session.idle` (the turn's end), failing after a bound. */
function nextIdle(ag: TestRuntime, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`session ${id}: no idle within ${TURN_TIMEOUT_MS} ms`));
    }, TURN_TIMEOUT_MS);
    const unsubscribe = ag.bus.subscribe((event) => {
      if (event.event !== "session.idle" || event.session?.id !== id) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}

interface Run {
  index: "on" | "off";
  cpuMs: number;
  wallMs: number;
  turnParts: number;
}

async function run(index: "on" | "off"): Promise<Run> {
  const ag = await startTestRuntime();
  try {
    if (index === "off") ag.search.stop();
    const idle = (id: string) => nextIdle(ag, id);
    const created = await callApi<{ id: string }>(ag, "POST", "/v1/sessions", {
      workDir: tempDir("ag-bench-search-cpu-"),
      agent: "gemini",
      driver: "acp",
      agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-bench-search-cpu-fake-")].join(" "),
    });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.id;
    await callApi(ag, "POST", `/v1/sessions/${id}/send`, { text: "say hello" });
    await idle(id);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let turn = 1; turn <= turns; turn++) {
      const ended = idle(id);
      const sent = await callApi(ag, "POST", `/v1/sessions/${id}/send`, { text: prose(chars, turn) });
      if (sent.status !== 200) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
      await ended;
    }
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await ag.search.settle(id);
    const turnParts = ag.search.stats().turns;
    await callApi(ag, "DELETE", `/v1/sessions/${id}`);
    return { index, cpuMs: (used.user + used.system) / 1000, wallMs, turnParts };
  } finally {
    await ag.drain(100);
    ag.close();
  }
}

const results: Run[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    for (const index of ["off", "on"] as const) {
      const result = await run(index);
      results.push(result);
      console.log(
        `round ${round + 1} index ${index}: ${turns} turns in ${(result.wallMs / 1000).toFixed(1)} s, ` +
          `ag CPU ${result.cpuMs.toFixed(0)} ms = ${((100 * result.cpuMs) / result.wallMs).toFixed(1)} % of a core, ` +
          `${(result.cpuMs / turns).toFixed(2)} ms a turn; turn parts indexed: ${result.turnParts}`,
      );
    }
  }
  for (const index of ["off", "on"] as const) {
    const mine = results.filter((r) => r.index === index);
    const cpu = mine.reduce((s, r) => s + r.cpuMs, 0);
    const wall = mine.reduce((s, r) => s + r.wallMs, 0);
    console.log(
      `index ${index}: ${((100 * cpu) / wall).toFixed(1)} % of a core, ${(cpu / (turns * mine.length)).toFixed(2)} ms of CPU a turn (${mine.length} runs)`,
    );
  }
} finally {
  await runCleanups();
}
process.exit(0);
