#!/usr/bin/env bun
/**
 * Drives ONE real OpenCode session (its TUI in tmux on a private socket, 120x40 like ag's
 * windows) against the mock model, launched exactly as ag launches it (the adapter's own
 * prepareLaunch: per-session config, plugin, keys), through the states ag must recognise. It
 * checks each screen with the adapter's reader and records the panes, every hook the plugin
 * forwarded (to a local receiver that refuses "DENYME" commands, as a policy would) and the
 * conversation file the plugin wrote.
 *
 *   bun scripts/capture-opencode.ts [--save] [--keep]
 *
 * --save writes tests/fixtures/agents/opencode/<version>/ (only when every check passed);
 * --keep leaves the temp dir. Prints "N passed, N failed".
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentObservation } from "../src/agents/agent.ts";
import { createOpenCodeAdapter } from "../src/agents/opencode/adapter.ts";
import { startMockModel } from "../tests/fakes/mock-model.ts";
import { opencodeBinary, opencodeSeed } from "../tests/helpers/agents/opencode.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";
import { captureFolders, createChecks, createPaneKit, hookReceiver } from "./capture-kit.ts";

const VERSION = "1.18.33";
const SAVE = process.argv.includes("--save");
const KEEP = process.argv.includes("--keep");
const OUT = join(import.meta.dir, "..", "tests", "fixtures", "agents", "opencode", VERSION);

const { root, home, work, bin, sessionDir, panes } = captureFolders("ag-capture-opencode-");
symlinkSync(opencodeBinary(), join(bin, "opencode"));

const checks = createChecks();
const { check } = checks;

const mock = startMockModel();
const receiver = hookReceiver(({ event, payload }) =>
  event === "tool.execute.before" && JSON.stringify(payload.args).includes("DENYME")
    ? { decision: "deny", reason: "refused by the capture's policy" }
    : {},
);
const { hooks } = receiver;

const adapter = createOpenCodeAdapter({
  home,
  dataDir: null,
  trustWorkdir: false,
  selfCommand: [],
  isRoot: false,
});
const plan = await adapter.prepareLaunch({
  sessionId: "0b5e55ed-0000-4000-8000-00000000c0de",
  workDir: work,
  permissionMode: "default",
  agentCommand: null,
  sessionDir: sessionDir,
  hookUrl: `http://127.0.0.1:${receiver.port}/v1/hooks/opencode`,
  hookSecret: "capture-secret",
  env: {},
});

const socket = `ag-capture-opencode-${process.pid}`;
const kit = createPaneKit({ socket, adapter, panes, checks, target: () => "oc" });
const { tmux, capture, paneDead, read, waitFor, save, keys } = kit;
const env = { ...opencodeSeed.seed(home, mock.url), ...plan.env, HOME: home, PATH: `${bin}:/usr/bin:/bin` };
const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
tmux(
  ...["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";"],
  ...["set-option", "-g", "default-terminal", "tmux-256color", ";"],
  ...[
    "new-session",
    "-d",
    "-s",
    "oc",
    "-x",
    "120",
    "-y",
    "40",
    "-c",
    work,
    "env",
    "-i",
    "TERM=tmux-256color",
    "LANG=C.UTF-8",
    ...vars,
    ...plan.command,
  ],
);

const idle = (o: AgentObservation) => o.kind === "screen-idle";
const turnEnds = async (from: number, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!hooks.slice(from).some((h) => h.event === "session.idle") && Date.now() < deadline)
    await Bun.sleep(100);
  await waitFor("idle after the turn", idle, 10_000);
  await Bun.sleep(300);
};
/** Pastes as ag does (one bracketed paste), waits for the box to show it, presses Enter. */
async function prompt(text: string) {
  const from = hooks.length;
  tmux("set-buffer", "-b", "ag", text);
  tmux("paste-buffer", "-p", "-d", "-b", "ag", "-t", "oc");
  await waitFor("the prompt in the box", (_, input) => input !== null && input !== "");
  await Bun.sleep(150);
  await keys("Enter");
  return from;
}

try {
  await waitFor("the input box", idle);
  save("01-idle-home", "screen-idle", "");
  tmux("send-keys", "-t", "oc", "-l", "say hel");
  await waitFor("typed text", (_, input) => input === "say hel");
  save("02-idle-typed", "screen-idle", "say hel");
  await keys(...adapter.keys.clearInput);
  await waitFor("an empty box after clearInput", (_, input) => input === "");
  await keys(...adapter.keys.clearInput);
  await Bun.sleep(500);
  check("clearInput on an empty box leaves OpenCode running", !paneDead());

  await turnEnds(await prompt("say hello"));
  save("03-idle-after-reply", "screen-idle", "");

  await prompt("slow 6");
  await waitFor("working", (o) => o.kind === "screen-working");
  await Bun.sleep(1500);
  save("04-working", "screen-working");
  await turnEnds(hooks.length, 30_000);

  let from = await prompt("run cmd: touch approved.txt");
  await waitFor("the bash permission", (o) => o.kind === "permission");
  await Bun.sleep(300);
  save("05-permission-bash", "permission", null);
  await keys(...adapter.keys.approve({ kind: "tool" }));
  await turnEnds(from);
  check(
    "approved command ran",
    Bun.file(join(work, "approved.txt")).size >= 0 && (await Bun.file(join(work, "approved.txt")).exists()),
  );

  from = await prompt("edit file");
  await waitFor("the edit permission", (o) => o.kind === "permission");
  await Bun.sleep(300);
  save("06-permission-edit", "permission", null);
  await keys(...adapter.keys.reject({ kind: "tool" }));
  await turnEnds(from);
  save("07-idle-after-reject", "screen-idle", "");
  check("rejected file not written", !(await Bun.file(join(work, "hello.txt")).exists()));

  from = await prompt("ask me");
  await waitFor("the question", (o) => o.kind === "permission");
  await Bun.sleep(300);
  save("08-question", "permission", null);
  const question = read().observation as Extract<AgentObservation, { kind: "permission" }>;
  check("question options read", question.request.options?.map((o) => o.label).join(",") === "Red,Blue");
  await keys("2");
  await turnEnds(from);

  await turnEnds(await prompt("run cmd: echo DENYME"));

  const thirty = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of a long prompt`).join("\n");
  tmux("set-buffer", "-b", "ag", thirty);
  tmux("paste-buffer", "-p", "-d", "-b", "ag", "-t", "oc");
  await waitFor("the folded paste", (_, input) => input?.startsWith("[Pasted") === true);
  save("09-idle-pasted", "screen-idle", "[Pasted ~30 lines]");
  from = hooks.length;
  await keys("Enter");
  await turnEnds(from);

  from = await prompt("slow 30");
  await waitFor("working", (o) => o.kind === "screen-working");
  await Bun.sleep(1500);
  tmux("send-keys", "-t", "oc", ...adapter.keys.interrupt);
  await turnEnds(from);
  save("10-interrupted", "screen-idle", "");

  await turnEnds(await prompt("bad request"));
  save("11-api-error", "screen-idle", "");

  from = await prompt("server error");
  await waitFor("the retry line", () => capture().includes("[retrying"), 20_000);
  save("12-retrying", "screen-working");
  tmux("send-keys", "-t", "oc", ...adapter.keys.interrupt);
  await turnEnds(from);

  from = await prompt("ask me");
  await waitFor("the question", (o) => o.kind === "permission");
  await Bun.sleep(300);
  await keys(...adapter.keys.reject(question.request));
  await turnEnds(from);

  await turnEnds(await prompt("say hello"));

  await keys("C-x", "q");
  await waitFor("the exit", (o) => o.kind === "exited", 15_000);
  save("13-exited", "exited", null);
} catch (error) {
  console.error(error);
  checks.check("the capture ran to its end", false);
} finally {
  killTmuxServer(socket);
  receiver.stop();
  await mock.stop();
}

const conversation = readFileSync(join(sessionDir, "conversation.jsonl"), "utf8");
const reader = adapter.transcript.createReader();
for (const line of conversation.split("\n").filter(Boolean)) reader.add(line);
check("the conversation's turn ended", reader.turnEnded());
check("tokens counted", reader.tokens().input > 0, JSON.stringify(reader.tokens()));
for (const event of adapter.hooks.events)
  check(
    `hook ${event} captured`,
    hooks.some((h) => h.event === event),
  );

writeFileSync(join(root, "hooks.jsonl"), hooks.map((h) => JSON.stringify(h)).join("\n"));
console.log(`${checks.passed} passed, ${checks.failed} failed (${root})`);
if (SAVE && checks.failed === 0) {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  cpSync(panes, join(OUT, "panes"), { recursive: true });
  writeFileSync(join(OUT, "hooks.jsonl"), `${hooks.map((h) => JSON.stringify(h)).join("\n")}\n`);
  writeFileSync(join(OUT, "conversation.jsonl"), conversation);
  console.log(`saved to ${OUT}`);
}
if (!KEEP) rmSync(root, { recursive: true, force: true });
process.exit(checks.failed === 0 ? 0 : 1);
