#!/usr/bin/env bun
/**
 * Drives ONE real Claude Code session (tmux, private socket) against the mock model through the
 * states ag must recognise, checks each screen with the product's own reader, and records what
 * the state fusion replays: the panes, every hook payload in order, the transcript, the mock's
 * request log, and a timeline of hook arrivals and screen changes.
 *
 *   bun scripts/capture-fixtures.ts [--save] [--keep]          (CLAUDE_BIN=… for another version)
 *
 * --save writes the fixtures of the version that ran (only when every check passed): 2.1.197's
 * in tests/fixtures/agent/ (from before the registry), any other's in
 * tests/fixtures/agents/claude/<version>/. --keep leaves the temp dir. Prints "N passed, N failed".
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScreenState } from "../src/agents/claude/screen.ts";
import { claudeDialect } from "../src/agents/claude/versions.ts";
import { startMockModel } from "../tests/fakes/mock-model.ts";
import {
  type AgentPane,
  agentEnv,
  claudeVersion,
  launchAgentPane,
  seedAgentHome,
} from "../tests/helpers/agent-home.ts";

const SAVE = process.argv.includes("--save");
const KEEP = process.argv.includes("--keep");
const VERSION = claudeVersion();
const DIALECT = claudeDialect(VERSION);
const OUT =
  VERSION === "2.1.197"
    ? join(import.meta.dir, "..", "tests", "fixtures", "agent")
    : join(import.meta.dir, "..", "tests", "fixtures", "agents", "claude", VERSION);
const SESSION_ID = "0b5e55ed-0000-4000-8000-0000000000a6";

/**
 * Every hook event of Claude Code 2.1.197 (its own list). SessionStart and Setup run only
 * `command` hooks ("HTTP hooks are not supported for SessionStart"), so a forwarder posts their
 * stdin. WorktreeCreate/WorktreeRemove are left out: a hook there replaces git's own worktree work.
 */
const HTTP_EVENTS = `
  PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification UserPromptSubmit
  UserPromptExpansion SessionEnd Stop StopFailure SubagentStart SubagentStop PreCompact
  PostCompact PermissionRequest PermissionDenied TeammateIdle TaskCreated TaskCompleted
  Elicitation ElicitationResult ConfigChange InstructionsLoaded CwdChanged FileChanged
  MessageDisplay
`
  .trim()
  .split(/\s+/);
const COMMAND_EVENTS = ["SessionStart", "Setup"];
const TOOL_EVENTS = new Set(
  "PreToolUse PostToolUse PostToolUseFailure PermissionRequest PermissionDenied".split(" "),
);
const REQUIRED_HOOKS = `
  SessionStart UserPromptSubmit PreToolUse PermissionRequest PostToolUse Notification Stop
  StopFailure SessionEnd
`
  .trim()
  .split(/\s+/);

interface HookEntry {
  t: string;
  path: string;
  body: Record<string, unknown>;
}

let passed = 0;
let failed = 0;
function check(label: string, ok: boolean, detail = ""): void {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${label}${detail ? ` — ${detail}` : ""}`);
}

const root = mkdtempSync(join(tmpdir(), "ag-capture-"));
const home = join(root, "home");
const work = join(root, "work");
mkdirSync(work, { recursive: true });
const hooks: HookEntry[] = [];
const timeline: Record<string, unknown>[] = [];
const panes = new Map<string, string>();

const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const raw = await request.text();
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw);
    } catch {
      body = { raw };
    }
    const entry = { t: new Date().toISOString(), path: new URL(request.url).pathname, body };
    hooks.push(entry);
    timeline.push({ t: entry.t, source: "hook", event: body.hook_event_name });
    return Response.json({});
  },
});
const hookUrl = `http://127.0.0.1:${receiver.port}/hook`;
const mock = startMockModel();
// Assigned inside run(); `as` keeps TypeScript from narrowing it to null in `finally`.
let pane = null as AgentPane | null;

function writeSettings(): string {
  const forwarder = join(root, "forward-hook.ts");
  writeFileSync(
    forwarder,
    "const body = await Bun.stdin.text();\n" +
      'await fetch(process.argv[2]!, { method: "POST", headers: { "content-type": "application/json" }, body }).catch(() => {});\n',
  );
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const settings: Record<string, unknown[]> = {};
  for (const event of HTTP_EVENTS) {
    const hook = { type: "http", url: `${hookUrl}/${event}`, timeout: 5 };
    settings[event] = [TOOL_EVENTS.has(event) ? { matcher: "*", hooks: [hook] } : { hooks: [hook] }];
  }
  for (const event of COMMAND_EVENTS) {
    const command = [process.execPath, forwarder, `${hookUrl}/${event}`].map(quote).join(" ");
    settings[event] = [{ hooks: [{ type: "command", command, timeout: 5 }] }];
  }
  const file = join(root, "hook-settings.json");
  writeFileSync(file, JSON.stringify({ hooks: settings }, null, 2));
  return file;
}

const names = (from = 0) => hooks.slice(from).map((h) => h.body.hook_event_name as string);

async function waitForHook(event: string, from: number, timeoutMs = 10_000): Promise<HookEntry | null> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await Bun.sleep(100)) {
    const hit = hooks.slice(from).find((h) => h.body.hook_event_name === event);
    if (hit) return hit;
  }
  return null;
}

/** Waits on the screen, noting each change of state in the timeline. */
let lastNoted = "";
async function waitFor(ready: (s: ScreenState, text: string) => boolean, what: string, timeoutMs = 20_000) {
  return pane!.waitFor(
    (state, text) => {
      const noted = JSON.stringify(state);
      if (noted !== lastNoted) timeline.push({ t: new Date().toISOString(), source: "screen", ...state });
      lastNoted = noted;
      return ready(state, text);
    },
    what,
    timeoutMs,
  );
}
const idleWith = (text: string) => (s: ScreenState, screen: string) =>
  s.state === "idle" && screen.includes(text);

function save(name: string, text: string): void {
  panes.set(name, text);
}

/** Types the prompt and checks that Claude Code accepted it (UserPromptSubmit). */
async function submit(prompt: string): Promise<void> {
  const from = hooks.length;
  await pane!.submit(prompt);
  const hook = await waitForHook("UserPromptSubmit", from, 5_000);
  check(`"${prompt}" submitted (UserPromptSubmit)`, hook?.body.prompt === prompt);
}

async function run(): Promise<void> {
  seedAgentHome(home, { trust: [work] });
  const settingsFile = writeSettings();
  const launchedAt = Date.now();
  pane = launchAgentPane({
    socket: `ag-test-capture-${process.pid}`,
    workDir: work,
    // Few retries: a 429 surfaces after seconds instead of minutes of back-off.
    env: { ...agentEnv(home, mock.url), CLAUDE_CODE_MAX_RETRIES: "2" },
    // The mode as ag launches it: 2.1.328 starts in auto mode when none is named.
    args: ["--session-id", SESSION_ID, "--settings", settingsFile, "--permission-mode", "default"],
    dialect: DIALECT.screen,
  });
  console.log(`Claude Code ${VERSION}`);
  let r = await waitFor((s) => s.state === "idle", "the idle prompt", 30_000);
  check("startup reaches the idle prompt", true, `${Date.now() - launchedAt} ms`);
  save("01-idle-startup", r.text);
  check("SessionStart forwarded by the command hook", (await waitForHook("SessionStart", 0, 5_000)) !== null);

  let from = hooks.length;
  await submit("say hello");
  r = await waitFor(idleWith("Hello from the mock model"), "the hello reply");
  save("02-idle-after-reply", r.text);
  check("Stop after a text reply", (await waitForHook("Stop", from)) !== null);

  await submit("think about it");
  r = await waitFor(idleWith("After thinking"), "the thinking reply");
  check("thinking block rendered", /Thought for \d+s/.test(r.text));
  save("03-thinking-reply", r.text);

  // A read-only command such as `ls` runs without asking (2.1.197): tool hooks, no dialog.
  from = hooks.length;
  await submit("run ls");
  r = await waitFor(idleWith("Listed the directory"), "the ls result");
  check(
    "read-only Bash ran unasked",
    !names(from).includes("PermissionRequest") && names(from).includes("PostToolUse"),
  );
  save("04-bash-unasked", r.text);

  from = hooks.length;
  await submit("run cmd: touch created-by-bash.txt");
  r = await waitFor((s) => s.state === "permission" && s.tool === "Bash", "the Bash permission dialog");
  check(
    "Bash permission shows the command",
    r.state.state === "permission" && r.state.detail === "touch created-by-bash.txt",
  );
  save("05-permission-bash", r.text);
  const request = await waitForHook("PermissionRequest", from);
  check("PermissionRequest for Bash", request?.body.tool_name === "Bash");
  const asked = Date.now();
  const note = await waitForHook("Notification", from, 15_000);
  check(
    "Notification while the dialog waits",
    note?.body.notification_type === "permission_prompt",
    `after ${Date.now() - asked} ms`,
  );
  pane.keys("Enter");
  r = await waitFor(idleWith("Command finished"), "the command's result");
  check("approved Bash ran", existsSync(join(work, "created-by-bash.txt")));
  save("06-bash-approved", r.text);

  from = hooks.length;
  await submit("edit file");
  r = await waitFor((s) => s.state === "permission" && s.tool === "Write", "the Write permission dialog");
  check("Write permission names the file", r.state.state === "permission" && r.state.detail === "hello.txt");
  save("07-permission-write", r.text);
  pane.keys("Escape");
  // "User rejected update to hello.txt" (2.1.197), "Rejected write to hello.txt" (2.1.328).
  r = await waitFor(
    (s, text) => s.state === "idle" && /User rejected|Rejected write/.test(text),
    "the rejection",
  );
  check("rejected Write created nothing", !existsSync(join(work, "hello.txt")));
  save("08-permission-rejected", r.text);

  await submit("ask me");
  r = await waitFor((s) => s.state === "ask_question", "the question");
  check(
    "AskUserQuestion shows its question",
    r.state.state === "ask_question" && r.state.question === "Which color should the button be?",
  );
  save("09-ask-question", r.text);
  pane.keys("Down");
  await Bun.sleep(200);
  pane.keys("Enter");
  r = await waitFor(idleWith("Thanks for answering"), "the answer");
  check("answered with option 2", r.text.includes("→ Blue"));
  save("10-ask-answered", r.text);

  if (DIALECT.framesPastes) {
    // A paste it collapses into "[Pasted text #N +L lines]" goes to the model in a frame of its own.
    const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    from = hooks.length;
    const buffer = join(root, "paste.txt");
    writeFileSync(buffer, text);
    const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-L", pane!.socket, ...args]);
    tmux("load-buffer", "-b", "capture", buffer);
    tmux("paste-buffer", "-p", "-d", "-b", "capture", "-t", pane!.target);
    r = await waitFor((s) => s.state === "idle" && s.pasted, "the collapsed paste");
    save("16-pasted-30-lines", r.text);
    await Bun.sleep(300);
    pane.keys("Enter");
    const hook = await waitForHook("UserPromptSubmit", from);
    const prompt = String(hook?.body.prompt ?? "");
    const frame = prompt.match(
      /^\n*<pasted_content id="([^"]+)">\n([\s\S]*)\n<\/pasted_content id="\1">\n*$/,
    );
    check("a collapsed paste arrives framed, the text whole inside", frame?.[2] === text);
    r = await waitFor(idleWith("Mock reply to"), "the paste's reply");
    save("17-after-paste", r.text);
  }

  await submit("slow 30");
  r = await waitFor((s) => s.state === "working" && (s.seconds ?? 0) >= 2, "working");
  save("11-working", r.text);
  pane.keys("C-c");
  r = await waitFor((s) => s.state === "idle" && s.interrupted, "the interrupt");
  check("Ctrl+C while streaming interrupts", true);
  save("12-interrupted", r.text);

  from = hooks.length;
  await submit("rate limit");
  r = await waitFor((s) => s.state === "working" && s.retrying, "the retry line");
  save("13-api-retrying", r.text);
  r = await waitFor((s) => s.state === "idle" && /429/.test(s.apiError ?? ""), "the 429 error", 30_000);
  save("14-api-error-429", r.text);
  const failure = await waitForHook("StopFailure", from);
  check("StopFailure says rate_limit", failure?.body.error === "rate_limit", String(failure?.body.error));

  from = hooks.length;
  pane.type("/exit");
  await Bun.sleep(300);
  pane.keys("Enter");
  r = await waitFor((s) => s.state === "exited", "the exit");
  check("/exit shows the resume id", r.state.state === "exited" && r.state.resumeId === SESSION_ID);
  save("15-after-exit", r.text);
  check(
    "SessionEnd on /exit",
    (await waitForHook("SessionEnd", from, 5_000))?.body.reason === "prompt_input_exit",
  );

  const seen = new Set(names());
  for (const event of REQUIRED_HOOKS) check(`hook-events covers ${event}`, seen.has(event));
}

try {
  await run();
} catch (err) {
  failed++;
  console.log(`FAIL ${(err as Error).message}`);
} finally {
  await pane?.kill();
  const transcript = join(
    home,
    ".claude",
    "projects",
    work.replace(/[^a-zA-Z0-9]/g, "-"),
    `${SESSION_ID}.jsonl`,
  );
  check("transcript at ~/.claude/projects/<encoded cwd>/<session-id>.jsonl", existsSync(transcript));
  if (SAVE && failed === 0) {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(join(OUT, "panes"), { recursive: true });
    for (const [name, text] of panes) writeFileSync(join(OUT, "panes", `${name}.txt`), text);
    const lines = (items: unknown[]) => `${items.map((i) => JSON.stringify(i)).join("\n")}\n`;
    writeFileSync(join(OUT, "hook-events.jsonl"), lines(hooks));
    writeFileSync(join(OUT, "requests.jsonl"), lines(mock.requests()));
    writeFileSync(join(OUT, "timeline.jsonl"), lines(timeline));
    copyFileSync(transcript, join(OUT, "transcript.jsonl"));
    console.log(
      `saved ${panes.size} panes, ${hooks.length} hook events, the transcript and requests in ${OUT}`,
    );
  } else if (SAVE) {
    console.log("not saved: some checks failed");
  }
  await mock.stop();
  await receiver.stop(true);
  if (KEEP) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}
