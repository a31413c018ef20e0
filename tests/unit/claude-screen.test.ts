import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  classifyScreen,
  inputBoxText,
  isInputEmpty,
  type ScreenState,
  type ScreenStateName,
} from "../../src/agents/claude/screen.ts";

// Panes captured from the real Claude Code 2.1.197 at 120x40 (`capture-pane -p` and `-p -e`).
const PANES = join(import.meta.dir, "..", "fixtures", "panes");
const pane = (name: string) => readFileSync(join(PANES, `${name}.txt`), "utf8");
const read = (name: string, options?: { paneDead?: boolean }) => classifyScreen(pane(name), options);

const EXPECTED: Record<string, ScreenStateName> = {
  "01-idle-startup": "idle",
  "02-idle-after-reply": "idle",
  "03-thinking-reply": "idle",
  "04-working": "working",
  "05-interrupted": "idle",
  "05b-interrupted-prompt-restored": "idle",
  "06-permission-bash": "permission",
  "07-permission-write": "permission",
  "08-permission-edit": "permission",
  "09-permission-rejected": "idle",
  "10-ask-question": "ask_question",
  "11-ask-answered": "idle",
  "12-mode-accept-edits": "idle",
  "13-mode-plan": "idle",
  "14-plan-approval": "plan_approval",
  "15-pasted-text": "idle",
  "16-api-retrying": "working",
  "17-api-error-429": "idle",
  "18-api-error-529": "idle",
  "19-ctrl-c-pending": "idle",
  "20-after-exit": "exited",
  "21-dialog-trust": "trust_dialog",
  "22-dialog-api-key": "api_key_dialog",
  "23-dialog-bypass": "bypass_dialog",
  "24-questions-first": "ask_question",
  "25-questions-second": "ask_question",
  "26-questions-review": "ask_question",
};

function expectState<S extends ScreenStateName>(
  screen: ScreenState,
  state: S,
): Extract<ScreenState, { state: S }> {
  expect(screen.state).toBe(state);
  return screen as Extract<ScreenState, { state: S }>;
}

describe("classifying captured Claude Code panes", () => {
  test("every captured pane has an expected state", () => {
    const names = readdirSync(PANES)
      .filter((f) => f.endsWith(".txt"))
      .map((f) => f.slice(0, -4));
    expect(names.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, state] of Object.entries(EXPECTED)) {
    test(`${name} reads as ${state}, with or without ANSI escapes`, () => {
      const plain = read(name);
      expect(plain.state).toBe(state);
      expect(classifyScreen(readFileSync(join(PANES, `${name}.ansi`), "utf8"))).toEqual(plain);
    });
  }

  test("an idle prompt: empty box, default mode, nothing pending", () => {
    expect(read("01-idle-startup")).toEqual({
      state: "idle",
      mode: "default",
      input: "",
      pasted: false,
      interrupted: false,
      apiError: null,
      ctrlCPending: false,
    });
  });

  test("working: the spinner's verb and timer", () => {
    const working = expectState(read("04-working"), "working");
    expect(working).toMatchObject({ spinnerVerb: "Sock-hopping", seconds: 2, retrying: false, input: "" });
  });

  test("working by the spinner alone, whatever its verb: one with letters beyond ASCII too", () => {
    // The footer's "esc to interrupt" is the last of its hints, cut first when the line is full.
    const footerless = pane("04-working").replace("esc to interrupt · ", "");
    for (const verb of ["Sock-hopping", "Flambéing", "Sautéing", "Beboppin'"]) {
      const screen = footerless.replace("Sock-hopping", verb);
      expect(expectState(classifyScreen(screen), "working").spinnerVerb).toBe(verb);
    }
  });

  test("an interrupt after some output says so", () => {
    expect(expectState(read("05-interrupted"), "idle").interrupted).toBe(true);
  });

  test("an interrupt before any output puts the prompt back into the box", () => {
    const restored = expectState(read("05b-interrupted-prompt-restored"), "idle");
    expect(restored.input).toBe("hang forever");
    expect(restored.apiError).toBeNull();
    expect(inputBoxText(pane("05b-interrupted-prompt-restored"))).toBe("hang forever");
  });

  test("permission dialogs name the tool and what it is about", () => {
    expect(read("06-permission-bash")).toEqual({
      state: "permission",
      tool: "Bash",
      title: "Bash command",
      detail: "touch created-by-bash.txt",
      question: "Do you want to proceed?",
    });
    expect(read("07-permission-write")).toMatchObject({
      tool: "Write",
      title: "Create file",
      detail: "hello.txt",
    });
    expect(read("08-permission-edit")).toMatchObject({
      tool: "Edit",
      detail: "hello.txt",
      question: "Do you want to make this edit to hello.txt?",
    });
  });

  test("a rejected edit leaves an idle prompt", () => {
    expect(expectState(read("09-permission-rejected"), "idle").interrupted).toBe(false);
  });

  test("AskUserQuestion: header, question and the agent's options (not the dialog's own rows)", () => {
    expect(read("10-ask-question")).toEqual({
      state: "ask_question",
      header: "Color",
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    });
  });

  test('shell mode: the box starts with "!" + U+00A0; a running command is work', () => {
    const box = pane("01-idle-startup").replace(/^❯\u00a0.*$/m, "!\u00a0sleep 3; echo done");
    expect(inputBoxText(box)).toBe("sleep 3; echo done");
    const running = pane("04-working").replace(/^.*Sock-hopping.*$/m, "! sleep 3; echo done\n  ⎿  Running…");
    expect(classifyScreen(running).state).toBe("working");
  });

  test("a dialog of several questions: each step is a question of its own, the review too", () => {
    expect(read("24-questions-first")).toMatchObject({
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    });
    expect(read("25-questions-second")).toMatchObject({
      question: "Which size should the button be?",
      options: [
        { index: 1, label: "Small" },
        { index: 2, label: "Large" },
        { index: 3, label: "Medium" },
      ],
    });
    expect(read("26-questions-review")).toMatchObject({
      question: "Ready to submit your answers?",
      options: [
        { index: 1, label: "Submit answers" },
        { index: 2, label: "Cancel" },
      ],
    });
  });

  test("the footer's permission mode", () => {
    expect(expectState(read("12-mode-accept-edits"), "idle").mode).toBe("acceptEdits");
    expect(expectState(read("13-mode-plan"), "idle").mode).toBe("plan");
    expect(expectState(read("11-ask-answered"), "idle").mode).toBe("default");
  });

  test("a bracketed paste shows a placeholder in the box", () => {
    const pasted = expectState(read("15-pasted-text"), "idle");
    expect(pasted.input).toBe("[Pasted text #1 +29 lines]");
    expect(pasted.pasted).toBe(true);
  });

  test("a retried API error counts as working, though the footer shows a stale hint", () => {
    const retrying = expectState(read("16-api-retrying"), "working");
    expect(retrying.retrying).toBe(true);
    expect(retrying.spinnerVerb).toBeNull();
  });

  test("API errors of the last turn, wrapped lines joined", () => {
    expect(expectState(read("17-api-error-429"), "idle").apiError).toBe(
      "Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit (mock)",
    );
    expect(expectState(read("18-api-error-529"), "idle").apiError).toBe(
      "529 Overloaded (mock). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:33457).",
    );
    expect(expectState(read("02-idle-after-reply"), "idle").apiError).toBeNull();
  });

  test("the first Ctrl+C asks for a second one", () => {
    expect(expectState(read("19-ctrl-c-pending"), "idle").ctrlCPending).toBe(true);
    expect(expectState(read("18-api-error-529"), "idle").ctrlCPending).toBe(false);
  });

  test("after exit: the resume id and the pane's exit status", () => {
    expect(read("20-after-exit")).toEqual({
      state: "exited",
      resumeId: "0b5e55ed-0000-4000-8000-000000000001",
      exitStatus: 0,
    });
    // tmux knows before the screen does.
    expect(read("02-idle-after-reply", { paneDead: true }).state).toBe("exited");
  });

  test("no input box and no dialog: still starting", () => {
    expect(classifyScreen("")).toEqual({ state: "starting" });
    expect(classifyScreen("\n\n   \n")).toEqual({ state: "starting" });
  });
});

// The project's own capture (scripts/capture-fixtures.ts), read with the same expectations.
const AGENT_PANES = join(import.meta.dir, "..", "fixtures", "agent", "panes");
const AGENT_EXPECTED: Record<string, ScreenStateName> = {
  "01-idle-startup": "idle",
  "02-idle-after-reply": "idle",
  "03-thinking-reply": "idle",
  "04-bash-unasked": "idle",
  "05-permission-bash": "permission",
  "06-bash-approved": "idle",
  "07-permission-write": "permission",
  "08-permission-rejected": "idle",
  "09-ask-question": "ask_question",
  "10-ask-answered": "idle",
  "11-working": "working",
  "12-interrupted": "idle",
  "13-api-retrying": "working",
  "14-api-error-429": "idle",
  "15-after-exit": "exited",
};

describe("the project's own captured panes", () => {
  test("each reads as the state it was captured in", () => {
    const files = readdirSync(AGENT_PANES).filter((f) => f.endsWith(".txt"));
    const states = Object.fromEntries(
      files.map((f) => [f.slice(0, -4), classifyScreen(readFileSync(join(AGENT_PANES, f), "utf8")).state]),
    );
    expect(states).toEqual(AGENT_EXPECTED);
  });
});

describe("the input box", () => {
  test("absent while a dialog is open", () => {
    expect(inputBoxText(pane("06-permission-bash"))).toBeNull();
    expect(isInputEmpty(pane("06-permission-bash"))).toBe(false);
  });

  test("empty at the idle prompt, the echoed prompts above do not count", () => {
    expect(inputBoxText(pane("02-idle-after-reply"))).toBe("");
    expect(isInputEmpty(pane("02-idle-after-reply"))).toBe(true);
    expect(isInputEmpty(pane("05b-interrupted-prompt-restored"))).toBe(false);
  });

  test("text wrapped over several lines is read up to the rule below the box", () => {
    const rule = "─".repeat(120);
    const screen = [
      rule,
      "❯\u00a0first line of a long",
      "  prompt that wraps",
      rule,
      "  ? for shortcuts",
    ].join("\n");
    expect(inputBoxText(screen)).toBe("first line of a long\nprompt that wraps");
    expect(classifyScreen(screen)).toMatchObject({
      state: "idle",
      input: "first line of a long\nprompt that wraps",
    });
  });

  test("an assistant line ending in an ellipsis is not a spinner once the turn is over", () => {
    const rule = "─".repeat(120);
    const screen = [
      "❯ say something",
      "",
      "● Let me think…",
      "",
      "✻ Cooked for 1s",
      rule,
      "❯\u00a0",
      rule,
      "  ? for shortcuts",
    ];
    expect(classifyScreen(screen.join("\n")).state).toBe("idle");
  });
});
