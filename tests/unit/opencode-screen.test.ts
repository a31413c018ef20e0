import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  classifyOpenCodeScreen,
  isOpenCodeProcess,
  readOpenCodeScreen,
} from "../../src/agents/opencode/screen.ts";

/** What the contract suite does not pin down: details of each screen, from real captured panes. */
const PANES = join(import.meta.dir, "..", "fixtures", "agents", "opencode", "1.18.33", "panes");
const pane = (name: string) => readFileSync(join(PANES, `${name}.txt`), "utf8");

describe("OpenCode's screen", () => {
  test("dialogs say what they are about: the command, the file, the question and its options", () => {
    expect(classifyOpenCodeScreen(pane("05-permission-bash"))).toEqual({
      state: "dialog",
      request: { kind: "tool", tool: "bash", detail: "touch approved.txt" },
    });
    expect(classifyOpenCodeScreen(pane("06-permission-edit"))).toEqual({
      state: "dialog",
      request: { kind: "tool", tool: "edit", detail: "hello.txt" },
    });
    expect(classifyOpenCodeScreen(pane("08-question"))).toEqual({
      state: "dialog",
      request: {
        kind: "question",
        tool: "question",
        detail: "Which color should the button be?",
        question: "Which color should the button be?",
        options: [
          { index: 1, label: "Red" },
          { index: 2, label: "Blue" },
        ],
      },
    });
  });

  test("an interrupted turn, a retrying request and the exit screen", () => {
    expect(classifyOpenCodeScreen(pane("10-interrupted"))).toMatchObject({
      state: "idle",
      interrupted: true,
    });
    expect(classifyOpenCodeScreen(pane("03-idle-after-reply"))).toMatchObject({
      state: "idle",
      interrupted: false,
    });
    expect(classifyOpenCodeScreen(pane("12-retrying"))).toMatchObject({ state: "working", retrying: true });
    expect(classifyOpenCodeScreen(pane("04-working"))).toMatchObject({ state: "working", retrying: false });
    expect(classifyOpenCodeScreen(pane("13-exited"))).toMatchObject({
      state: "exited",
      resumeId: expect.stringMatching(/^ses_/),
    });
    expect(classifyOpenCodeScreen(pane("03-idle-after-reply"), { paneDead: true }).state).toBe("exited");
  });

  test("its start screen is told apart: no conversation drawn, so no turn's end can show there", () => {
    expect(readOpenCodeScreen(pane("01-idle-home")).observation).toEqual({
      kind: "screen-idle",
      interrupted: false,
      home: true,
    });
    for (const name of ["03-idle-after-reply", "07-idle-after-reject", "09-idle-pasted", "11-api-error"])
      expect(readOpenCodeScreen(pane(name)).observation).toEqual({ kind: "screen-idle", interrupted: false });
  });

  test("a prompt with no reply under it yet says nothing of the turn; its box still takes text", () => {
    // Captured with one core busy: the conversation view before the reply began (the turn began
    // seconds later), the prompt's block and no "▣" footer below it.
    const pending = pane("14-pending");
    expect(classifyOpenCodeScreen(pending)).toEqual({ state: "pending", input: "" });
    expect(readOpenCodeScreen(pending)).toMatchObject({ observation: { kind: "starting" }, input: "" });
  });

  test("a blank pane is a start-up; tmux's dead-pane line gives the exit status", () => {
    expect(classifyOpenCodeScreen("\n\n\n").state).toBe("starting");
    const dead = `${pane("13-exited")}\nPane is dead (status 1, Tue Nov 24 17:53:45 2026)\n`;
    expect(readOpenCodeScreen(dead).observation).toEqual({ kind: "exited", status: 1 });
  });

  test("on a wide pane the sidebar's column is not the input's", () => {
    const wide = pane("02-idle-typed")
      .split("\n")
      .map((line) => (line.includes("say hel") ? `${line.padEnd(120)}   Context 8,113 tokens` : line))
      .join("\n");
    expect(readOpenCodeScreen(wide).input).toBe("say hel");
  });

  test("a running tool's spinner is not activity; new conversation text is", () => {
    const working = pane("04-working");
    const spinning = working.replace("This r", "⠦ This r");
    expect(readOpenCodeScreen(spinning.replace("⠦", "⠧")).activityKey).toBe(
      readOpenCodeScreen(spinning).activityKey,
    );
    expect(readOpenCodeScreen(working.replace("This r", "This re")).activityKey).not.toBe(
      readOpenCodeScreen(working).activityKey,
    );
    // What ag types into the box is not the agent's activity either.
    expect(readOpenCodeScreen(pane("02-idle-typed")).activityKey).toBe(
      readOpenCodeScreen(pane("01-idle-home")).activityKey,
    );
  });

  test("its processes: the native binary, the npm package's link, its node launcher; not a shell", () => {
    expect(isOpenCodeProcess(["/usr/lib/node_modules/opencode-linux-x64/bin/opencode", "-s", "ses_1"])).toBe(
      true,
    );
    expect(isOpenCodeProcess(["/x/node_modules/opencode-ai/bin/opencode.exe"])).toBe(true);
    expect(isOpenCodeProcess(["node", "/x/node_modules/opencode-ai/bin/opencode"])).toBe(true);
    expect(isOpenCodeProcess(["bash", "-c", "opencode"])).toBe(false);
    expect(isOpenCodeProcess(["claude"])).toBe(false);
  });
});
