import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { classifyScreen, readScreen } from "../../src/agents/gemini/screen.ts";

/** The Gemini CLI's screens (captured panes, 0.61.0), and what a reading must not be fooled by. */
const pane = (name: string) =>
  readFileSync(join(import.meta.dir, "../fixtures/agents/gemini/0.61.0/panes", `${name}.txt`), "utf8");

describe("the Gemini CLI's screen", () => {
  test("a dialog's tool, what it is about and its question", () => {
    expect(classifyScreen(pane("permission-shell"))).toEqual({
      state: "permission",
      tool: "run_shell_command",
      detail: "touch approved.txt",
      question: "Allow execution of [Shell]?",
    });
    expect(classifyScreen(pane("permission-write"))).toMatchObject({
      tool: "write_file",
      detail: "hello.txt",
    });
  });

  test("a question's text and options, without the dialog's own custom row", () => {
    for (const name of ["question", "nocolor-question"])
      expect(classifyScreen(pane(name))).toEqual({
        state: "question",
        question: "Which color should the button be?",
        options: [
          { index: 1, label: "Red" },
          { index: 2, label: "Blue" },
        ],
      });
  });

  test("the first frames are no ready screen: keys sent then arrive one by one (no bracketed paste)", () => {
    for (const name of ["first-frame", "first-frame-notice", "starting"])
      expect(readScreen(pane(name))).toMatchObject({ observation: { kind: "starting" }, input: null });
  });

  test("a resumed CLI is ready only once the conversation is loaded (its input box comes first)", () => {
    // Captured under load: header and input box, then "Resuming session..." (box hidden), then
    // the conversation and the box again. What is typed into the first box is dropped.
    const resuming = { resuming: true };
    expect(classifyScreen(pane("resume-before-load"), resuming)).toEqual({ state: "starting" });
    expect(classifyScreen(pane("resuming"), resuming)).toEqual({ state: "starting" });
    expect(classifyScreen(pane("resumed"), resuming)).toMatchObject({ state: "idle", input: "" });
    // A long conversation pushes the header off the screen; a failed load leaves the header alone.
    const scrolled = pane("resumed").split("\n");
    const tail = scrolled.slice(scrolled.findLastIndex((l) => l.startsWith("> ")) + 1).join("\n");
    expect(classifyScreen(tail, resuming)).toMatchObject({ state: "idle", input: "" });
    const failed = pane("resume-before-load").replace(
      "⚠  Warning",
      "✕ Failed to resume session. Please try again.\n⚠  Warning",
    );
    expect(classifyScreen(failed, resuming)).toMatchObject({ state: "idle" });
    // A fresh launch shows the same header and box: ready.
    expect(classifyScreen(pane("resume-before-load"))).toMatchObject({ state: "idle", input: "" });
  });

  test("working is read from '(esc to cancel', even with the hint painted over the spinner", () => {
    const garbled = pane("idle-end").replace(
      /^ {2}Executing Hook: ag.*$/m,
      "? for shortcutsoks: ag, ag (esc to cancel, 0s)",
    );
    expect(classifyScreen(garbled)).toEqual({ state: "working", input: "" });
  });

  test("the last turn's end: refused or interrupted, an API error with its wrapped lines", () => {
    expect(classifyScreen(pane("after-reject"))).toMatchObject({ state: "idle", interrupted: true });
    expect(classifyScreen(pane("after-answer"))).toMatchObject({
      state: "idle",
      interrupted: false,
      apiError: null,
    });
    expect(classifyScreen(pane("api-error"))).toMatchObject({
      apiError:
        '[API Error: {"error":{"code":400,"message":"Invalid request (mock)","status":"INVALID_ARGUMENT"}}]',
    });
    // A later prompt starts a turn of its own: the old error is not this one's.
    expect(classifyScreen(pane("idle-end"))).toMatchObject({ state: "idle", apiError: null });
  });

  test("a past prompt is not the input line; the input line's text, whole", () => {
    expect(readScreen(pane("idle-typed")).input).toBe("half typed");
    expect(readScreen(pane("nocolor-typed")).input).toBe("half typed");
    expect(readScreen(pane("pasted-30-lines")).input).toBe("[Pasted Text: 30 lines]");
    expect(readScreen(pane("after-answer")).input).toBe("");
  });

  test("the exit: the CLI's goodbye, or tmux's dead pane with its status", () => {
    expect(classifyScreen(pane("exited"))).toEqual({ state: "exited", status: null });
    expect(
      readScreen("some output\n\nPane is dead (status 3, Tue Nov 24 18:00:00 2026)").observation,
    ).toEqual({
      kind: "exited",
      status: 3,
    });
    expect(readScreen(pane("idle-end"), { paneDead: true }).observation.kind).toBe("exited");
  });

  test("what moves by itself (spinner, timer, hook progress) is no activity", () => {
    const working = pane("working");
    const later = working
      .replace(/\(esc to cancel, \d+s\)/, "(esc to cancel, 9s)")
      .replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, "⠏");
    expect(readScreen(later).activityKey).toBe(readScreen(working).activityKey);
    expect(readScreen(pane("idle-end")).activityKey).not.toBe(readScreen(pane("after-answer")).activityKey);
  });
});
