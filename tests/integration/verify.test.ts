import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AgEvent, createEventBus, type EventBus } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import { listen } from "../../src/server/listen.ts";
import { verificationRoutes } from "../../src/server/routes/verification.ts";
import { createLogger } from "../../src/shared/log.ts";
import {
  createVerificationService,
  runCommand,
  type VerificationResult,
  type VerificationService,
  type VerificationSettings,
} from "../../src/verify/index.ts";
import { sampleSession, type TestApp, testApp } from "../helpers/app.ts";
import { sampleInput } from "../helpers/events.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * The verification protocol on real tiny projects: real npx/tsc, npm and node processes, through
 * the HTTP route, with the events on the real bus.
 */

const typescriptDir = dirname(Bun.resolveSync("typescript/package.json", import.meta.dir));

const GOOD_TS = "export const answer: number = 42;\n";
const BAD_TS = 'export const answer: number = "forty-two";\n';
const PASS_JS = 'console.log("ok");\n';
const fail = (message: string, code: number) =>
  `console.error(${JSON.stringify(message)}); process.exit(${code});\n`;

interface ProjectFiles {
  /** src/index.ts; null: no TypeScript at all (no tsconfig.json). */
  ts?: string | null;
  /** build.js; null: no build script. */
  build?: string | null;
  /** test.js; null: no test script. */
  test?: string | null;
  /** Link the repo's TypeScript into node_modules, as `npm install` would (default true). */
  typescript?: boolean;
}

/** A tiny TypeScript project in a temp dir; `npx tsc` finds the repo's compiler offline. */
function tinyProject(files: ProjectFiles = {}): string {
  const dir = tempDir("ag-verify-");
  const { ts = GOOD_TS, build = PASS_JS, test: testJs = PASS_JS, typescript = true } = files;
  const scripts: Record<string, string> = {};
  if (build !== null) {
    scripts.build = "node build.js";
    writeFileSync(join(dir, "build.js"), build);
  }
  if (testJs !== null) {
    scripts.test = "node test.js";
    writeFileSync(join(dir, "test.js"), testJs);
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "tiny", private: true, scripts }));
  if (ts !== null) {
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "index.ts"), ts);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", types: [] },
        include: ["src"],
      }),
    );
  }
  if (typescript) {
    mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
    symlinkSync(typescriptDir, join(dir, "node_modules", "typescript"));
    symlinkSync("../typescript/bin/tsc", join(dir, "node_modules", ".bin", "tsc"));
  }
  return dir;
}

interface Harness {
  app: TestApp;
  bus: EventBus;
  service: VerificationService;
  /** A stored session in `workDir`; returns its id. */
  session(workDir: string): string;
  verify(id: string, body?: unknown): Promise<Response>;
  verifications(): AgEvent<"verification">[];
  /** Resolves with the next event of that name published from now on. */
  next(event: EventName): Promise<{ detail: string; meta: Record<string, unknown> }>;
}

const services: VerificationService[] = [];
afterAll(() => {
  for (const service of services) service.dispose();
});

function harness(settings: Partial<VerificationSettings> = {}): Harness {
  const bus = createEventBus();
  const logger = createLogger({ level: "silent", json: true });
  let app: TestApp | undefined;
  const service = createVerificationService({
    sessions: { get: (id) => app!.sessions.get(id) },
    bus,
    logger,
    settings: { criticalOnly: false, autoVerifyOnStop: false, ...settings },
  });
  services.push(service);
  app = testApp({ supervise: false, bus, plugins: [verificationRoutes(service)] });
  const ready = app;
  return {
    app: ready,
    bus,
    service,
    session(workDir) {
      const record = sampleSession({ workDir });
      ready.repo.insert(record);
      return record.id;
    },
    verify: (id, body) =>
      ready.request("POST", `/v1/sessions/${id}/verify`, body === undefined ? {} : { body }),
    verifications: () => ready.events.filter((e): e is AgEvent<"verification"> => e.event === "verification"),
    next: (name) =>
      new Promise((resolve) => {
        const stop = bus.subscribe((e) => {
          if (e.event !== name) return;
          stop();
          resolve(e);
        });
      }),
  };
}

async function verified(h: Harness, id: string, body?: unknown): Promise<VerificationResult> {
  const response = await h.verify(id, body);
  expect(response.status).toBe(200);
  return (await response.json()) as VerificationResult;
}

const byName = (result: VerificationResult) => Object.fromEntries(result.steps.map((s) => [s.name, s]));

/** Gone, or a zombie waiting for a reaper (it runs nothing any more). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && !isGone(pid); i++) await Bun.sleep(20);
  return isGone(pid);
}

describe("POST /v1/sessions/:id/verify", () => {
  test("a healthy project passes tsc, build and test, and the event says so", async () => {
    const h = harness();
    const workDir = tinyProject();
    const id = h.session(workDir);
    const result = await verified(h, id);
    expect(result.ok).toBe(true);
    expect(result.steps.map((s) => [s.name, s.command, s.ok, s.skipped, s.exitCode])).toEqual([
      ["tsc", "npx --no-install tsc --noEmit", true, false, 0],
      ["build", "npm run build", true, false, 0],
      ["test", "npm test", true, false, 0],
    ]);
    expect(byName(result).test!.output).toContain("ok");
    expect(result.summary).toMatch(/^Verification passed: tsc ✅, build ✅, test ✅ \(\d+ms\)$/);
    expect(result.totalDurationMs).toBeGreaterThanOrEqual(result.steps.reduce((n, s) => n + s.durationMs, 0));

    const [event] = h.verifications();
    expect(h.verifications()).toHaveLength(1);
    expect(event!.session).toEqual({ id, name: expect.any(String), workDir });
    expect(event!.detail).toBe(result.summary);
    expect(event!.meta).toMatchObject({ ...result, criticalOnly: false, trigger: "api" });
  });

  test("a type error fails the tsc step with the compiler's message; the other steps still run", async () => {
    const h = harness();
    const result = await verified(h, h.session(tinyProject({ ts: BAD_TS })));
    expect(result.ok).toBe(false);
    const { tsc, build, test: testStep } = byName(result);
    expect(tsc).toMatchObject({ ok: false, skipped: false });
    expect(tsc!.exitCode).not.toBe(0);
    expect(tsc!.output).toContain("TS2322");
    expect(build!.ok).toBe(true);
    expect(testStep!.ok).toBe(true);
    expect(result.summary).toMatch(/^Verification failed: tsc ❌, build ✅, test ✅ \(\d+ms\)$/);
    expect(h.verifications()[0]!.meta.ok).toBe(false);
  });

  test("a failing build fails the build step", async () => {
    const h = harness();
    const result = await verified(h, h.session(tinyProject({ build: fail("the build broke", 3) })));
    expect(result.ok).toBe(false);
    const { tsc, build, test: testStep } = byName(result);
    expect(build).toMatchObject({ ok: false, exitCode: 3 });
    expect(build!.output).toContain("the build broke");
    expect(tsc!.ok && testStep!.ok).toBe(true);
    expect(result.summary).toMatch(/^Verification failed: tsc ✅, build ❌, test ✅/);
  });

  test("a failing test fails the test step", async () => {
    const h = harness();
    const result = await verified(h, h.session(tinyProject({ test: fail("1 test failed", 1) })));
    expect(result.ok).toBe(false);
    const { test: testStep } = byName(result);
    expect(testStep).toMatchObject({ ok: false, exitCode: 1 });
    expect(testStep!.output).toContain("1 test failed");
    expect(result.summary).toMatch(/^Verification failed: tsc ✅, build ✅, test ❌/);
  });

  test("criticalOnly in the config skips the test step; the body overrides it either way", async () => {
    const h = harness({ criticalOnly: true });
    const id = h.session(tinyProject({ ts: null, test: fail("would fail", 1) }));
    const critical = await verified(h, id);
    expect(critical.ok).toBe(true);
    expect(byName(critical).test).toMatchObject({
      skipped: true,
      ok: true,
      exitCode: null,
      reason: "criticalOnly: the test step is skipped",
    });
    expect(critical.summary).toMatch(/^Verification passed: tsc ⏭️, build ✅, test ⏭️/);

    const full = await verified(h, id, { criticalOnly: false });
    expect(byName(full).test).toMatchObject({ skipped: false, ok: false });

    const h2 = harness();
    const id2 = h2.session(tinyProject({ ts: null, test: fail("would fail", 1) }));
    expect(byName(await verified(h2, id2, { criticalOnly: true })).test!.skipped).toBe(true);
    expect(h2.verifications()[0]!.meta.criticalOnly).toBe(true);
  });

  test("missing tsconfig and scripts skip their steps, never fail them", async () => {
    const h = harness();
    const result = await verified(h, h.session(tinyProject({ ts: null, build: null, test: null })));
    expect(result.ok).toBe(true);
    expect(result.steps.map((s) => [s.name, s.skipped, s.reason])).toEqual([
      ["tsc", true, "no tsconfig.json in the workDir"],
      ["build", true, "package.json has no build script"],
      ["test", true, "package.json has no test script"],
    ]);
  });

  test("a tsconfig without TypeScript installed fails tsc with a reason, and installs nothing", async () => {
    const h = harness();
    const workDir = tinyProject({ typescript: false, build: null, test: null });
    const { tsc } = byName(await verified(h, h.session(workDir)));
    expect(tsc).toMatchObject({ ok: false, skipped: false });
    expect(tsc!.reason).toContain("TypeScript is not installed");
  });

  test("a workDir without package.json is ok: false with an explanatory summary", async () => {
    const h = harness();
    const workDir = tempDir("ag-verify-empty-");
    const result = await verified(h, h.session(workDir));
    expect(result.ok).toBe(false);
    expect(result.steps).toEqual([]);
    expect(result.summary).toMatch(
      /^Verification failed: no package\.json in .+, so there is nothing to type check, build or test \(\d+ms\)$/,
    );
    expect(h.verifications()[0]!.detail).toBe(result.summary);
  });

  test("an unknown session is 404 SESSION_NOT_FOUND; a bad body is 400", async () => {
    const h = harness();
    const missing = await h.verify("no-such-session");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "SESSION_NOT_FOUND", statusCode: 404 });

    const id = h.session(tinyProject());
    const bad = await h.verify(id, { criticalOnly: "yes" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(h.verifications()).toHaveLength(0);
  });

  test("a step past its timeout is killed with its whole process tree", async () => {
    // The build's tree must exist before its step times out: npm, sh and node start in well under
    // 5 s even with the cores busy (1.5 s was not always enough, and the test step's 1.5 s, which
    // this test is not about, could time out too).
    const h = harness({ timeouts: { stepMs: 5_000, testMs: 60_000, killGraceMs: 300 } });
    // npm → sh → node build.js → sh → sleep, and the grandchild ignores SIGTERM.
    const build = [
      'const { spawn } = require("node:child_process");',
      'require("node:fs").writeFileSync("build.pid", String(process.pid));',
      'spawn("sh", ["-c", "trap \\"\\" TERM; sleep 60 & echo $! > grandchild.pid; wait"], { stdio: "ignore" });',
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const workDir = tinyProject({ ts: null, build });
    const result = await verified(h, h.session(workDir));
    expect(result.ok).toBe(false);
    const step = byName(result).build!;
    expect(step.ok).toBe(false);
    expect(step.exitCode).toBeNull();
    expect(step.reason).toBe("timed out after 5000 ms: its whole process tree was killed");
    expect(byName(result).test!.ok).toBe(true);

    const buildPid = Number(readFileSync(join(workDir, "build.pid"), "utf8"));
    const grandchild = Number(readFileSync(join(workDir, "grandchild.pid"), "utf8").trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(await waitGone(buildPid)).toBe(true);
    expect(await waitGone(grandchild)).toBe(true);
  });

  test("processes a finished step left behind are ended with it", async () => {
    const h = harness();
    const build = [
      'const { spawn } = require("node:child_process");',
      'const c = spawn("sleep", ["60"], { stdio: ["ignore", "inherit", "inherit"] });',
      'require("node:fs").writeFileSync("left.pid", String(c.pid));',
      "c.unref();",
      'console.log("built");',
    ].join("\n");
    const workDir = tinyProject({ ts: null, test: null, build });
    const result = await verified(h, h.session(workDir));
    expect(byName(result).build).toMatchObject({ ok: true, exitCode: 0 });
    expect(await waitGone(Number(readFileSync(join(workDir, "left.pid"), "utf8")))).toBe(true);
  });

  test("calls on one workDir never overlap, whichever session makes them; calls made while one is queued share it", async () => {
    const h = harness();
    const build = [
      'const fs = require("node:fs");',
      'fs.appendFileSync("runs.log", "start\\n");',
      'setTimeout(() => fs.appendFileSync("runs.log", "end\\n"), 300);',
    ].join("\n");
    const workDir = tinyProject({ ts: null, test: null, build });
    const id = h.session(workDir);
    const log = join(workDir, "runs.log");
    const first = verified(h, id);
    // Once the first run's build has started, two more calls: one queues, the other joins it.
    while (!existsSync(log)) await Bun.sleep(10);
    const other = h.session(workDir);
    const [second, third] = await Promise.all([verified(h, other), verified(h, other)]);
    expect((await first).ok).toBe(true);
    expect(readFileSync(log, "utf8")).toBe("start\nend\nstart\nend\n");
    expect(second.ok).toBe(true);
    expect(third).toEqual(second);
    expect(h.verifications()).toHaveLength(2);
  });
});

describe("autoVerifyOnStop", () => {
  test("verifies when a turn ends (the state's session.turn_ended), not on a boot's idle", async () => {
    const h = harness({ autoVerifyOnStop: true, criticalOnly: true });
    const workDir = tinyProject({ ts: null });
    const id = h.session(workDir);
    const session = { id, name: "auto", workDir };
    h.bus.publish(sampleInput("session.created", { session, detail: "created" }));
    h.bus.publish(
      sampleInput("session.idle", { session, detail: "working → idle", meta: { previous: "working" } }),
    );
    expect(h.verifications()).toHaveLength(0);

    const verification = h.next("verification");
    h.bus.publish(sampleInput("session.working", { session, detail: "idle → working" }));
    h.bus.publish(
      sampleInput("session.idle", { session, detail: "working → idle", meta: { previous: "working" } }),
    );
    expect(h.verifications()).toHaveLength(0);
    h.bus.publish(
      sampleInput("session.turn_ended", { session, detail: "working → idle", meta: { reason: "completed" } }),
    );
    const event = await verification;
    expect(event.meta).toMatchObject({ ok: true, trigger: "auto", criticalOnly: true });
    expect(event.detail).toMatch(/^Verification passed: tsc ⏭️, build ✅, test ⏭️/);
    expect(h.verifications()).toHaveLength(1);
  });

  test("is off by default", async () => {
    const h = harness();
    const workDir = tinyProject({ ts: null });
    const session = { id: h.session(workDir), name: "manual", workDir };
    h.bus.publish(sampleInput("session.working", { session }));
    h.bus.publish(sampleInput("session.idle", { session }));
    // An auto run would be queued first on this workDir (or be joined): only ours shows.
    await verified(h, session.id);
    expect(h.verifications().map((e) => e.meta.trigger)).toEqual(["api"]);
  });
});

describe("what the steps see", () => {
  test("ag's own settings (SVC_*) are not in a step's environment, nor in its published output", async () => {
    process.env.SVC_VERIFY_TEST_SECRET = "hunter2-secret";
    try {
      const h = harness();
      const workDir = tinyProject({
        ts: null,
        test: null,
        build: "console.log(JSON.stringify(process.env));\n",
      });
      const result = await verified(h, h.session(workDir));
      const output = byName(result).build!.output;
      expect(output).toContain('"PATH"');
      expect(output).not.toContain("hunter2-secret");
      expect(output).not.toContain("SVC_VERIFY_TEST_SECRET");
      expect(JSON.stringify(h.verifications())).not.toContain("hunter2-secret");
    } finally {
      delete process.env.SVC_VERIFY_TEST_SECRET;
    }
  });
});

describe("over real HTTP", () => {
  test("a verification longer than Bun's 10 s request idle timeout still gets its answer", async () => {
    const h = harness();
    const workDir = tinyProject({
      ts: null,
      test: null,
      build: 'setTimeout(() => console.log("slow build"), 11_000);\n',
    });
    const id = h.session(workDir);
    const server = await listen(h.app, { host: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20 });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/v1/sessions/${id}/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.app.token}` },
      });
      expect(response.status).toBe(200);
      const result = (await response.json()) as VerificationResult;
      expect(result.ok).toBe(true);
      expect(byName(result).build!.output).toContain("slow build");
    } finally {
      await server.stop(0);
    }
  }, 30_000);
});

describe("the command runner", () => {
  const cwd = tempDir("ag-verify-run-");

  test("a leader that ignores SIGTERM is killed after the grace", async () => {
    const outcome = await runCommand({
      argv: ["sh", "-c", "trap '' TERM; echo started; sleep 30"],
      cwd,
      timeoutMs: 300,
      killGraceMs: 200,
    });
    expect(outcome).toMatchObject({ exitCode: null, timedOut: true, aborted: false });
    expect(outcome.output).toBe("started\n");
  });

  test("stdout and stderr are both kept; the exit code is the command's", async () => {
    const outcome = await runCommand({
      argv: ["sh", "-c", "echo out; echo err >&2; exit 7"],
      cwd,
      timeoutMs: 5_000,
      killGraceMs: 200,
    });
    expect(outcome.exitCode).toBe(7);
    expect(outcome.output).toContain("out\n");
    expect(outcome.output).toContain("err\n");
  });

  test("the inherited environment wins over the defaults", async () => {
    const outcome = await runCommand({
      argv: ["sh", "-c", 'echo "$AG_VERIFY_DEFAULT $PATH"'],
      cwd,
      timeoutMs: 5_000,
      killGraceMs: 200,
      defaultEnv: { AG_VERIFY_DEFAULT: "default", PATH: "/nowhere" },
    });
    expect(outcome.output).toBe(`default ${process.env.PATH}\n`);
  });

  test("aborting stops the command", async () => {
    const stop = new AbortController();
    const running = runCommand({
      argv: ["sleep", "30"],
      cwd,
      timeoutMs: 30_000,
      killGraceMs: 200,
      signal: stop.signal,
    });
    stop.abort();
    expect(await running).toMatchObject({ exitCode: null, aborted: true, timedOut: false });
  });

  test("a program that is not there is a spawn error, not a throw", async () => {
    const outcome = await runCommand({
      argv: ["ag-no-such-program"],
      cwd,
      timeoutMs: 1_000,
      killGraceMs: 100,
    });
    expect(outcome.exitCode).toBeNull();
    expect(outcome.spawnError).toBeString();
  });
});
