import { describe, expect, test } from "bun:test";
import type { StreamedEvent } from "../../src/cli/events.ts";
import { createTimeline, formatTimelineLine } from "../../src/cli/timeline.ts";
import { transitionEvents } from "../../src/sessions/live/fusion/events.ts";

const SESSION = { id: "s-1", name: "one", workDir: "/w" };
let nextId = 1;

function event(name: string, detail = "", meta: Record<string, unknown> = {}): StreamedEvent {
  return { id: nextId++, event: name, timestamp: "2026-01-01T10:00:00.000Z", session: SESSION, detail, meta };
}

const QUESTION = {
  id: "perm-2",
  kind: "question",
  detail: "Which color should the button be?",
  question: "Which color should the button be?",
  options: [
    { index: 1, label: "Red" },
    { index: 2, label: "Blue" },
  ],
};
const WRITE = { id: "perm-1", kind: "tool", tool: "Write", detail: "/w/hello.txt" };

/** Every event one change of state publishes, in the order the server publishes them. */
function change(
  previous: string,
  status: string,
  pending: unknown = null,
  detail = `${previous} → ${status}`,
) {
  const names = transitionEvents(
    { status: previous, pending: null } as never,
    { status, pending } as never,
    undefined,
  );
  return names.map((name) =>
    event(name, detail, { previous, status, pendingPermission: pending, source: "hook" }),
  );
}

function lines(events: StreamedEvent[]): string[] {
  const timeline = createTimeline();
  return events.flatMap((e) => {
    const line = timeline(e);
    return line ? [formatTimelineLine(e.timestamp, line, false).replace(/^\d\d:\d\d:\d\d {2}/, "")] : [];
  });
}

describe("ag tail prints one line per change", () => {
  test("the twins one change publishes (session.* and status.*) make one line, named by the state", () => {
    const events = [
      ...change("idle", "working"),
      ...change("working", "permission_prompt", WRITE, "Write: /w/hello.txt"),
      ...change("permission_prompt", "working"),
      ...change("working", "asking", QUESTION),
      ...change("asking", "idle"),
      event("session.turn_ended", "working → idle", {
        previous: "working",
        status: "idle",
        reason: "completed",
      }),
      ...change("idle", "killed", null, "killed"),
    ];
    expect(events.length).toBeGreaterThan(10);
    expect(lines(events)).toEqual([
      "working      idle → working",
      "permission   Write: /w/hello.txt",
      "working      permission_prompt → working",
      "question     Which color should the button be? — 1. Red · 2. Blue",
      "idle         asking → idle",
      "killed       killed",
    ]);
  });

  test("a second prompt while one is pending is a change of its own; a plan says so", () => {
    const next = {
      ...QUESTION,
      id: "perm-3",
      question: "Which size?",
      options: [{ index: 1, label: "Small" }],
    };
    const plan = { id: "perm-4", kind: "plan", detail: "1. Do it" };
    const out = lines([
      ...change("working", "asking", QUESTION),
      ...change("asking", "asking", next).map((e) => ({ ...e })),
      ...change("asking", "permission_prompt", plan),
    ]);
    expect(out).toEqual([
      "question     Which color should the button be? — 1. Red · 2. Blue",
      "question     Which size? — 1. Small",
      "plan         plan: 1. Do it",
    ]);
  });

  test("tool calls show their input: the command, the file, the pattern", () => {
    const tool = (name: string, input: unknown) => event("message.tool_use", name, { tool: name, input });
    expect(
      lines([
        tool("Bash", { command: "npm test\n  --watch=false", description: "Run the tests" }),
        tool("Write", { file_path: "/w/hello.txt", content: "hi" }),
        tool("Grep", { pattern: "TODO", path: "src" }),
        tool("WebFetch", { url: "https://example.com", prompt: "read" }),
        tool("Mystery", { a: 1 }),
        event("message.tool_result", "boom", { toolUseId: "t", isError: true }),
      ]),
    ).toEqual([
      "tool         Bash: npm test ⏎ --watch=false",
      "tool         Write: /w/hello.txt",
      "tool         Grep: TODO in src",
      "tool         WebFetch: https://example.com",
      'tool         Mystery: {"a":1}',
      "tool error   boom",
    ]);
  });

  test("a failed or interrupted turn is news; a completed one is the idle line's", () => {
    const ended = (reason: string) =>
      event("session.turn_ended", "working → idle", { previous: "working", status: "idle", reason });
    expect(lines([ended("completed"), ended("interrupted"), ended("failed")])).toEqual([
      "turn interrupted  working → idle",
      "turn failed  working → idle",
    ]);
  });

  test("other sessions' twins are their own", () => {
    const timeline = createTimeline();
    const [first] = change("idle", "working");
    const other = { ...first!, session: { ...SESSION, id: "s-2" } };
    expect(timeline(first!)).not.toBeNull();
    expect(timeline(other)).not.toBeNull();
  });
});
