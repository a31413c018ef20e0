#!/usr/bin/env bun
/**
 * Drives ONE real Codex CLI session (its TUI in tmux on a private socket, 120x40 like ag's
 * windows) against the mock model's openai-responses face, launched exactly as ag launches it
 * (the adapter's own prepareLaunch: read-only sandbox, approvals on request, hooks by `-c`
 * forwarded by `ag hook` from this checkout to a local receiver that refuses "DENYME" commands,
 * as a policy would), through the states ag must recognise. It checks each screen with the
 * adapter (as `forVersion` gives it for the version run) and records the panes, every hook payload
 * and the session's rollout. Then the start-up dialogs and a question, each in a Codex of its own.
 * Machine paths are replaced by /home/user/project (the work folder) and /home/user (the home).
 *
 *   bun scripts/capture-codex.ts [--save] [--keep]       CODEX_BIN=…/bin/codex.js for another install
 *
 * --save writes tests/fixtures/agents/codex/<version>/ (only when every check passed);
 * --keep leaves the temp dir. Prints "N passed, N failed".
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentObservation } from "../src/agents/agent.ts";
import { createCodexAdapter } from "../src/agents/codex/adapter.ts";
import { startMockModel } from "../tests/fakes/mock-model.ts";
import { codexLauncher, codexSeed, codexVersion } from "../tests/helpers/agents/codex.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";
import { captureFolders, createChecks, createPaneKit, hookReceiver } from "./capture-kit.ts";

const VERSION = codexVersion();
const SAVE = process.argv.includes("--save");
const KEEP = process.argv.includes("--keep");
const REPO = join(import.meta.dir, "..");
const OUT = join(REPO, "tests", "fixtures", "agents", "codex", VERSION);

const { root, home, work, bin, sessionDir, panes } = captureFolders("ag-capture-codex-");
symlinkSync(codexLauncher(), join(bin, "codex"));

const checks = createChecks();
const { check } = checks;

const mock = startMockModel();
// The policy's refusal of a command that names DENYME, as ag's pre-tool hook gives it.
const receiver = hookReceiver(({ event, payload }) =>
  event === "PreToolUse" && JSON.stringify(payload.tool_input).includes("DENYME")
    ? adapter.policy.deny(event, "ag policy: denied (mock)")
    : {},
);
const { hooks } = receiver;

const environment = {
  home,
  dataDir: null,
  trustWorkdir: true,
  selfCommand: [process.execPath, join(REPO, "src", "main.ts")],
  isRoot: false,
};
const adapter = createCodexAdapter(environment).forVersion(VERSION);
const launch = (permissionMode = "default") =>
  adapter.prepareLaunch({
    sessionId: "0b5e55ed-0000-4000-8000-00000000c0de",
    workDir: work,
    permissionMode,
    agentCommand: null,
    sessionDir,
    hookUrl: `http://127.0.0.1:${receiver.port}/v1/hooks/codex`,
    hookSecret: "capture-secret",
    env: {},
  });
const plan = await launch();

const socket = `ag-capture-codex-${process.pid}`;
const kit = createPaneKit({ socket, adapter, panes, checks, target: () => target });
const { tmux, capture, paneDead, waitFor, save, keys } = kit;
const env = { ...codexSeed.seed(home, mock.url), ...plan.env, HOME: home, PATH: `${bin}:/usr/bin:/bin` };
const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
/** A window running `command` in `dir` (the main session's is "cx"). */
function open(name: string, command: string[], dir = work, extra: string[] = []): void {
  tmux(
    ...["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";"],
    ...["set-option", "-g", "default-terminal", "tmux-256color", ";"],
    ...["new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", dir],
    ...["env", "-i", "TERM=tmux-256color", "LANG=C.UTF-8", ...vars, ...extra, ...command],
  );
}
let target = "cx";

const idle = (o: AgentObservation) => o.kind === "screen-idle";
/** Waits for the turn's end hook (Stop, Interrupt), or `ms`, then for an idle screen. */
const turnEnds = async (from: number, ms = 30_000, screen = idle) => {
  const deadline = Date.now() + ms;
  const ended = () => hooks.slice(from).some((h) => h.event === "Stop" || h.event === "Interrupt");
  while (!ended() && Date.now() < deadline) await Bun.sleep(100);
  await waitFor("idle after the turn", screen, 10_000);
  await Bun.sleep(300);
};
/** Pastes as ag does (one bracketed paste), waits for the composer to show it, presses Enter. */
async function prompt(text: string) {
  const from = hooks.length;
  tmux("set-buffer", "-b", "ag", text);
  tmux("paste-buffer", "-p", "-d", "-b", "ag", "-t", target);
  await waitFor("the prompt in the composer", (_, input) => input !== null && input !== "");
  await Bun.sleep(150);
  await keys("Enter");
  return from;
}

const thirty = Array.from(
  { length: 30 },
  (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`,
).join("\n");
const failedTurn = (o: AgentObservation) => o.kind === "turn-failed";

try {
  open("cx", plan.command);
  await waitFor("the composer", idle);
  await Bun.sleep(1000);
  save("01-idle-startup", "screen-idle", "");

  await turnEnds(await prompt("say hello"));
  save("02-idle-after-reply", "screen-idle", "");
  tmux("send-keys", "-t", target, "-l", "a draft");
  await waitFor("typed text", (_, input) => input === "a draft");
  save("03-idle-typed", "screen-idle", "a draft");
  await keys(...adapter.keys.clearInput);
  await waitFor("an empty composer after clearInput", (_, input) => input === "");

  let from = await prompt("run cmd: touch approved.txt");
  await waitFor("the command's approval", (o) => o.kind === "permission");
  await Bun.sleep(300);
  save("04-permission-bash", "permission", null);
  await keys(...adapter.keys.approve({ kind: "tool" }));
  await turnEnds(from);
  save("05-after-approve", "screen-idle", "");
  check("the approved command ran", await Bun.file(join(work, "approved.txt")).exists());

  from = await prompt("run cmd: touch rejected.txt");
  await waitFor("the command's approval", (o) => o.kind === "permission");
  await Bun.sleep(300);
  await keys(...adapter.keys.reject({ kind: "tool" }));
  await turnEnds(from);
  save("06-after-reject", "screen-idle", "");
  check("the refused command did not run", !(await Bun.file(join(work, "rejected.txt")).exists()));

  from = await prompt("edit file");
  await waitFor("the edit's approval", (o) => o.kind === "permission");
  await Bun.sleep(300);
  save("07-permission-edit", "permission", null);
  await keys(...adapter.keys.approve({ kind: "tool" }));
  await turnEnds(from);
  save("08-after-edit", "screen-idle", "");

  from = await prompt("slow 6");
  await waitFor("streaming text", () => capture().includes("streamed slowly"), 20_000);
  await Bun.sleep(500);
  save("09-streaming", "screen-working", "");
  await turnEnds(from);

  from = await prompt("hang forever");
  await waitFor("the status line", () => /esc to interrupt/.test(capture()), 20_000);
  await Bun.sleep(1500);
  save("10-working-status", "screen-working", "");
  await keys(...adapter.keys.interrupt);
  await turnEnds(from);
  save("11-interrupted", "screen-idle", "");

  from = await prompt("rate limit");
  await waitFor("the API error", failedTurn, 30_000);
  await Bun.sleep(500);
  save("12-api-error-429", "turn-failed", "");

  tmux("set-buffer", "-b", "ag", thirty);
  tmux("paste-buffer", "-p", "-d", "-b", "ag", "-t", target);
  await waitFor("the folded paste", (_, input) => input?.startsWith("[Pasted") === true);
  await Bun.sleep(300);
  save("13-pasted-30-lines", "turn-failed");
  from = hooks.length;
  await keys("Enter");
  await turnEnds(from);

  tmux("send-keys", "-t", target, "-l", "!echo bang");
  await waitFor("shell mode", (_, input) => input === "!echo bang");
  save("15-shell-mode-typed", "screen-idle", "!echo bang");
  await keys(...adapter.keys.clearInput);
  tmux("send-keys", "-t", target, "-l", "!");
  await waitFor("an empty shell mode", (_, input) => input === "!");
  save("16-shell-mode-empty", "screen-idle", "!");
  await keys(...adapter.keys.clearInput, "BSpace");
  await waitFor("an empty composer", (_, input) => input === "");

  from = await prompt("server error");
  await waitFor("the API error", failedTurn, 30_000);
  await Bun.sleep(500);
  save("24-api-error-500", "turn-failed", "");

  await turnEnds(await prompt("run cmd: echo DENYME"));
  save("25-hook-denied", "screen-idle", "");

  // A second Codex resuming this thread while it runs: Codex lets one writer at a time.
  const thread = String(hooks.find((h) => h.event === "SessionStart")?.payload.session_id);
  target = "26-thread-locked";
  open(target, [...plan.command, "resume", thread]);
  await waitFor("the thread-locked screen", (o) => o.kind === "permission", 30_000);
  await Bun.sleep(500);
  save("26-thread-locked", "permission", null);
  await keys(...adapter.keys.reject({ kind: "trust", dialog: "thread-locked" }));
  await waitFor("the second Codex gone", (o) => o.kind === "exited", 15_000);
  check("refusing the locked thread quits the second Codex", paneDead());
  tmux("kill-session", "-t", target);
  target = "cx";

  await turnEnds(await prompt("say hello"));
  await keys("C-c");
  await waitFor("the exit", (o) => o.kind === "exited", 15_000);
  await Bun.sleep(1000);
  save("14-after-exit", "exited", null);
} catch (error) {
  console.error(error);
  checks.check("the capture ran to its end", false);
}

/** The start-up dialogs and a question, each in a Codex of its own (not part of the rollout). */
async function dialog(
  name: string,
  command: string[],
  options: { dir?: string; env?: string[]; before?: () => Promise<void> } = {},
) {
  const { dir = work, env = [], before } = options;
  target = name;
  try {
    open(name, command, dir, env);
    await before?.();
    await waitFor(name, (o) => o.kind === "permission", 30_000);
    await Bun.sleep(500);
    save(name, "permission", null);
  } catch (error) {
    console.error(error);
  } finally {
    tmux("kill-session", "-t", name);
    target = "cx";
  }
}
const [program, ...flags] = plan.command as [string, ...string[]];
const trustFlag = flags.findIndex((f) => f.startsWith("projects="));
const untrusted = flags.filter((_, i) => i !== trustFlag && i !== trustFlag - 1);
const repo = join(root, "repo");
mkdirSync(repo);
Bun.spawnSync(["git", "init", "-q", repo]);
await dialog("20-trust-folder", [program, ...untrusted], { dir: repo });
await dialog("21-hooks-review", [program, ...flags.filter((f) => f !== "--dangerously-bypass-hook-trust")]);
// A Codex home whose config has not yet answered the offer of the newer model.
const fresh = join(root, "fresh-codex-home");
mkdirSync(fresh);
const seeded = readFileSync(join(home, ".codex", "config.toml"), "utf8");
writeFileSync(join(fresh, "config.toml"), seeded.replace(/\[notice\.model_migrations\][^[]*/, ""));
await dialog("22-model-upgrade", [program, ...flags], { env: [`CODEX_HOME=${fresh}`] });
await dialog("23-question", [program, ...flags], {
  before: async () => {
    await waitFor("the composer", idle);
    await Bun.sleep(1500);
    await keys("BTab");
    await waitFor("Plan mode", () => capture().includes("Plan mode"), 10_000);
    await prompt("ask me");
  },
});

killTmuxServer(socket);
receiver.stop();
await mock.stop();

const rollouts = [...new Bun.Glob(".codex/sessions/**/rollout-*.jsonl").scanSync({ cwd: home, dot: true })];
const rolloutPath = hooks.find((h) => h.event === "SessionStart")?.payload.transcript_path as string;
check("one rollout named by the hooks", typeof rolloutPath === "string", JSON.stringify(rollouts));
const rollout = rolloutPath ? readFileSync(rolloutPath, "utf8") : "";
const reader = adapter.transcript.createReader();
for (const line of rollout.split("\n").filter(Boolean)) reader.add(line);
check("the rollout's last turn ended", reader.turnEnded());
check("tokens counted", reader.tokens().input > 0, JSON.stringify(reader.tokens()));
// The main session's hooks (the dialogs' Codexes ran threads of their own).
const thread = hooks.find((h) => h.event === "SessionStart")?.payload.session_id;
const ours = hooks.filter((h) => h.payload.session_id === thread);
for (const event of adapter.hooks.events)
  check(
    `hook ${event} captured`,
    ours.some((h) => h.event === event),
  );

/** Machine paths out: the work folder and the home become /home/user/project and /home/user. */
const scrub = (text: string) =>
  text
    .replaceAll(repo, "/home/user/project")
    .replaceAll(fresh, "/home/user/.codex")
    .replaceAll(work, "/home/user/project")
    .replaceAll(home, "/home/user")
    .replaceAll(root, "/home/user")
    .replaceAll(tmpdir(), "/tmp");
const hooksText = `${ours.map((h) => JSON.stringify(h)).join("\n")}\n`;
writeFileSync(join(root, "hooks.jsonl"), hooksText);
writeFileSync(join(root, "rollout.jsonl"), rollout);
console.log(`${checks.passed} passed, ${checks.failed} failed (${root})`);
if (SAVE && checks.failed === 0) {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(join(OUT, "panes"), { recursive: true });
  for (const file of new Bun.Glob("*.txt").scanSync(panes))
    writeFileSync(join(OUT, "panes", file), scrub(readFileSync(join(panes, file), "utf8")));
  writeFileSync(join(OUT, "hooks.jsonl"), scrub(hooksText));
  writeFileSync(join(OUT, "rollout.jsonl"), scrub(rollout));
  console.log(`saved to ${OUT}`);
}
if (!KEEP) rmSync(root, { recursive: true, force: true });
process.exit(checks.failed === 0 ? 0 : 1);
