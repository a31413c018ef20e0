import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** A few edges of the design that a change could quietly break, checked on the sources. */
const SRC = join(import.meta.dir, "..", "..", "src");

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const files = sources().map((path) => ({ path: relative(SRC, path), text: readFileSync(path, "utf8") }));
const transpiler = new Bun.Transpiler({ loader: "ts" });
const importsOf = (text: string) => transpiler.scanImports(text).map((i) => i.path);

test("a session's status has one writer: only sessions/live/writer.ts saves it", () => {
  const writers = files.filter((f) => /\.saveStatus\(/.test(f.text)).map((f) => f.path);
  expect(writers).toEqual(["sessions/live/writer.ts"]);
  // And the general update cannot carry a status (its patch type has none).
  const repo = files.find((f) => f.path === "sessions/repo.ts")!.text;
  const patch = repo.slice(
    repo.indexOf("export type SessionPatch"),
    repo.indexOf("export type StatusRecord"),
  );
  expect(patch).not.toMatch(/"status"|"pendingPermission"|"endedAt"|"endReason"/);
});

test("outside sessions/, the domain is reached through sessions/index.ts only", () => {
  const reachingIn = files
    .filter((f) => !f.path.startsWith("sessions/"))
    .flatMap((f) =>
      importsOf(f.text)
        .filter((p) => /(^|\/)sessions\//.test(p) && !p.endsWith("sessions/index.ts"))
        .map((p) => `${f.path} → ${p}`),
    );
  expect(reachingIn).toEqual([]);
});

test("domains publish facts and never call a channel: only the composition root and delivery import channels/", () => {
  const delivery = (path: string) => path === "runtime.ts" || /^(server|cli)\//.test(path);
  const importers = files
    .filter((f) => !f.path.startsWith("channels/") && !delivery(f.path))
    .filter((f) => importsOf(f.text).some((p) => /(^|\/)channels\//.test(p)))
    .map((f) => f.path);
  expect(importers).toEqual([]);
});

test("what feeds the live sessions (hooks, tmux) does not reach into the service", () => {
  const feed = files.filter((f) => f.path.startsWith("sessions/feed/"));
  expect(feed.length).toBeGreaterThan(0);
  for (const f of feed) expect(importsOf(f.text).filter((p) => p.endsWith("/service.ts"))).toEqual([]);
});

/**
 * What only one agent CLI knows: its hook payload fields and event names, its keys, its files
 * and its environment. Outside its own folder (agents/<cli>/) ag speaks the adapter's neutral
 * words, so a new agent touches its folder, one registry line and its fixtures (docs/agents.md).
 */
const AGENT_SPECIFIC: ReadonlyArray<[RegExp, string]> = [
  // (ag's own tables have session_id and transcript_path columns: rows may name them.)
  [
    /(?<!row|\)\?)\.(session_id|transcript_path|tool_name|tool_input|tool_use_id|hook_event_name|notification_type|prompt_id)\b/,
    "a hook payload field",
  ],
  [
    /\[\s*["'](session_id|transcript_path|tool_name|tool_input|hook_event_name)["']\s*\]/,
    "a hook payload field",
  ],
  [
    /["'](PreToolUse|PostToolUse|PostToolUseFailure|UserPromptSubmit|PermissionRequest|SessionStart|SessionEnd|StopFailure|SubagentStop|BeforeTool|AfterTool)["']/,
    "a hook event name",
  ],
  [/["']C-u["']/, "a key of one agent's input line"],
  [/\.claude\b|\.codex\b|\.gemini\b|opencode\.json|rollout-/, "an agent's own files"],
  [
    /CLAUDE_CONFIG_DIR|CODEX_HOME|GEMINI_API_KEY|GOOGLE_GEMINI_BASE_URL|ANTHROPIC_[A-Z_]+|OPENAI_[A-Z_]+|OPENCODE_[A-Z_]+/,
    "an agent's environment variable",
  ],
];

/** Code without its comments: prose may name what it likes. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

test("nothing outside agents/<cli>/ names one agent's payload fields, hook events, keys, files or environment", () => {
  const ownFolder = /^agents\/[^/]+\//;
  const leaks = files
    .filter((f) => !ownFolder.test(f.path))
    .flatMap((f) => {
      const text = code(f.text);
      return AGENT_SPECIFIC.filter(([pattern]) => pattern.test(text)).map(
        ([pattern, what]) => `${f.path}: ${what} (${text.match(pattern)![0]})`,
      );
    });
  expect(leaks).toEqual([]);
});

test("agents/ never reaches up into the sessions domain", () => {
  const upward = files
    .filter((f) => f.path.startsWith("agents/"))
    .flatMap((f) =>
      importsOf(f.text)
        .filter((p) => /(^|\/)sessions\//.test(p))
        .map((p) => `${f.path} → ${p}`),
    );
  expect(upward).toEqual([]);
});

/**
 * The floors of src/ (docs/architecture.md), lowest first: a folder imports only folders on floors
 * below its own, never one beside it or above it. A new folder takes its place here.
 */
const FLOORS: readonly (readonly string[])[] = [
  ["shared", "version.ts", "protocol"],
  ["events", "tmux", "transcript", "host", "auth", "memory", "screenshot"],
  ["agents", "audit", "diagnostics"],
  ["config", "store", "telemetry"],
  ["drivers", "router"],
  ["sessions"],
  [
    "channels",
    "checkpoints",
    "consensus",
    "fleet",
    "health",
    "metrics",
    "pipelines",
    "search",
    "swarm",
    "templates",
    "terminal",
    "verify",
    "budgets",
    "handoff",
  ],
  ["mcp", "editor"],
  ["server"],
  ["init", "runtime.ts"],
  ["cli"],
  ["main.ts"],
];
const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((f) => [f, floor] as const)));
const folderOf = (path: string) => path.split("/")[0]!;

/**
 * Every import of a file within src/, as src-relative paths: static imports and exports (also
 * type-only ones, which Bun's scanner drops: a circle of types is a circle too) and `import()`.
 */
function localImports(file: { path: string; text: string }): string[] {
  const specifiers = new Set(importsOf(file.text));
  for (const m of code(file.text).matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gm))
    specifiers.add(m[1]!);
  return [...specifiers]
    .filter((spec) => spec.startsWith("."))
    .map((spec) => relative(SRC, join(SRC, dirname(file.path), spec)))
    .filter((path) => !path.startsWith(".."));
}
const graph = new Map(files.map((f) => [f.path, localImports(f)]));

/** The import circles of src/ (strongly connected files, Tarjan), each as its files. */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const circle: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      circle.push(member);
    } while (member !== file);
    if (circle.length > 1 || graph.get(file)!.includes(file)) found.push(circle.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

test("the import graph of src/ has no circle, not even of types", () => {
  expect(graph.size).toBeGreaterThan(300);
  expect(circles()).toEqual([]);
});

test("every folder of src/ stands on a floor, and imports only folders on floors below its own", () => {
  expect(files.map((f) => folderOf(f.path)).filter((folder) => !floorOf.has(folder))).toEqual([]);
  const upward = [...graph].flatMap(([file, imports]) =>
    imports
      .filter((target) => folderOf(target) !== folderOf(file))
      .filter((target) => floorOf.get(folderOf(target))! >= floorOf.get(folderOf(file))!)
      .map((target) => `${file} → ${target}`),
  );
  expect(upward).toEqual([]);
});

test("drivers/ reaches the sessions only through its port (drivers/port.ts), and sessions/ reaches tmux only through a driver", () => {
  const crossing = [...graph].flatMap(([file, imports]) =>
    imports
      .filter(
        (target) =>
          (file.startsWith("drivers/") && target.startsWith("sessions/")) ||
          (file.startsWith("sessions/") && target.startsWith("tmux/")),
      )
      .map((target) => `${file} → ${target}`),
  );
  expect(crossing).toEqual([]);
});
