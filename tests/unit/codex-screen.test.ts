import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isCodexProcess, readScreen } from "../../src/agents/codex/adapter.ts";
import { type CodexScreen, classifyScreen, composerText } from "../../src/agents/codex/screen.ts";

// Panes captured from the real Codex CLI 0.169.0 at 120x40 (`capture-pane -p`).
const PANES = join(import.meta.dir, "..", "fixtures", "agents", "codex", "0.169.0", "panes");
const pane = (name: string) => readFileSync(join(PANES, `${name}.txt`), "utf8");
const read = (name: string) => classifyScreen(pane(name));

const EXPECTED: Record<string, CodexScreen["state"]> = {
  "01-idle-startup": "idle",
  "02-idle-after-reply": "idle",
  "03-idle-typed": "idle",
  "04-permission-bash": "permission",
  "05-after-approve": "idle",
  "06-after-reject": "idle",
  "07-permission-edit": "permission",
  "08-after-edit": "idle",
  "09-streaming": "working",
  "10-working-status": "working",
  "11-interrupted": "idle",
  "12-api-error-429": "idle",
  "13-pasted-30-lines": "idle",
  "14-after-exit": "exited",
  "15-shell-mode-typed": "idle",
  "16-shell-mode-empty": "idle",
  "20-trust-folder": "start_dialog",
  "21-hooks-review": "start_dialog",
  "22-model-upgrade": "start_dialog",
  "23-question": "question",
  "24-api-error-500": "idle",
  "25-hook-denied": "idle",
  "26-thread-locked": "start_dialog",
};

function expectState<S extends CodexScreen["state"]>(
  screen: CodexScreen,
  state: S,
): Extract<CodexScreen, { state: S }> {
  expect(screen.state).toBe(state);
  return screen as Extract<CodexScreen, { state: S }>;
}

describe("classifying captured Codex CLI panes", () => {
  test("every captured pane has an expected state", () => {
    const names = readdirSync(PANES).map((f) => f.replace(/\.txt$/, ""));
    expect(names.sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [name, state] of Object.entries(EXPECTED))
      expect([name, read(name).state]).toEqual([name, state]);
  });

  test("the composer: a placeholder is empty, typed and pasted text is the input", () => {
    expect(composerText(pane("01-idle-startup"))).toBe("");
    expect(composerText(pane("03-idle-typed"))).toBe("a draft");
    expect(composerText(pane("13-pasted-30-lines"))).toBe("[Pasted Content 1580 chars]");
    expect(composerText(pane("04-permission-bash"))).toBeNull();
  });

  test("shell mode: the command with its '!'; empty, it is still no empty composer (a prompt would run)", () => {
    expect(composerText(pane("15-shell-mode-typed"))).toBe("!echo bang");
    expect(composerText(pane("16-shell-mode-empty"))).toBe("!");
  });

  test("a streaming answer shows no status line: the prompt without a turn end makes it working", () => {
    const streaming = pane("09-streaming");
    expect(streaming).not.toContain("esc to interrupt");
    expect(expectState(read("09-streaming"), "working").retrying).toBe(false);
    // Its end written, the same turn reads idle.
    const ended = streaming.replace(/^› Ask Codex/m, "  Worked for 6s • 17:45\n› Ask Codex");
    expect(classifyScreen(ended).state).toBe("idle");
  });

  test("the live status line, retries included", () => {
    expect(read("10-working-status").state).toBe("working");
    const retrying = pane("10-working-status").replace(
      "• Working (2s • esc to interrupt)",
      "• Reconnecting... 2/5 (9s • esc to interrupt)",
    );
    expect(expectState(classifyScreen(retrying), "working").retrying).toBe(true);
  });

  test("an answer scrolled past its prompt: working until its end shows", () => {
    const body = Array.from({ length: 30 }, (_, i) => `  line ${i} of a long answer`).join("\n");
    const composer = "› Ask Codex to do anything\n  GPT-5.5 default · /p\n  ← for agents · ? for shortcuts";
    expect(classifyScreen(`• The answer\n${body}\n${composer}`).state).toBe("working");
    expect(classifyScreen(`• The answer\n${body}\n  Worked for 9s • 10:00\n${composer}`).state).toBe("idle");
  });

  test("interrupted, refused and failed turns end idle, and say how", () => {
    expect(expectState(read("11-interrupted"), "idle")).toMatchObject({ interrupted: true, apiError: null });
    expect(expectState(read("06-after-reject"), "idle").interrupted).toBe(true);
    expect(expectState(read("12-api-error-429"), "idle").apiError).toMatch(
      /^exceeded retry limit, last status: 429 Too Many Requests/,
    );
    expect(expectState(read("24-api-error-500"), "idle").apiError).toContain("high demand");
    expect(expectState(read("02-idle-after-reply"), "idle")).toMatchObject({
      interrupted: false,
      apiError: null,
    });
  });

  test("approvals: the command, or the file an edit writes", () => {
    expect(read("04-permission-bash")).toEqual({
      state: "permission",
      tool: "Bash",
      detail: "touch approved.txt",
    });
    expect(read("07-permission-edit")).toEqual({
      state: "permission",
      tool: "apply_patch",
      detail: "/home/user/project/hello.txt",
    });
  });

  test("a question: its text and the agent's options, Codex's own row left out", () => {
    expect(read("23-question")).toEqual({
      state: "question",
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red", description: "A bold red button" },
        { index: 2, label: "Blue", description: "A calm blue button" },
      ],
      questions: 1,
    });
  });

  test("start-up dialogs, and the folder a trust dialog names", () => {
    expect(read("20-trust-folder")).toEqual({
      state: "start_dialog",
      dialog: "folder-trust",
      folder: "/home/user/project",
    });
    expect(expectState(read("21-hooks-review"), "start_dialog").dialog).toBe("hooks-review");
    expect(expectState(read("22-model-upgrade"), "start_dialog").dialog).toBe("model-upgrade");
  });

  test("a resumed conversation another Codex writes is a dialog, not a composer with its last prompt", () => {
    // Above the lock notice the conversation so far ends with "› say hello": no input box here.
    expect(read("26-thread-locked")).toEqual({
      state: "start_dialog",
      dialog: "thread-locked",
      folder: null,
    });
    expect(composerText(pane("26-thread-locked"))).toBeNull();
    const reading = readScreen(pane("26-thread-locked"), { workDir: "/home/user/project" }, true);
    expect(reading.observation).toMatchObject({
      kind: "permission",
      request: { kind: "trust", dialog: "thread-locked" },
    });
    expect(reading.autoAnswer).toBeUndefined();
  });

  test("the exit screen names the thread to resume; a dead pane is an exit with its status", () => {
    expect(read("14-after-exit")).toEqual({
      state: "exited",
      resumeId: "01a20ea9-4c77-7da3-b65f-010e1a946965",
      exitStatus: null,
    });
    expect(classifyScreen(pane("02-idle-after-reply"), { paneDead: true }).state).toBe("exited");
    const dead = classifyScreen(
      `${pane("14-after-exit")}\nPane is dead (status 1, Mon Nov 24 17:45:00 2026)`,
    );
    expect(expectState(dead, "exited").exitStatus).toBe(1);
  });
});

describe("the adapter's reading of a screen", () => {
  test("the folder-trust dialog of the session's own folder is answered when ag trusts it", () => {
    const trust = pane("20-trust-folder");
    expect(readScreen(trust, { workDir: "/home/user/project" }, true).autoAnswer).toEqual({
      dialog: "folder-trust",
      keys: ["Enter"],
    });
    expect(readScreen(trust, { workDir: "/elsewhere" }, true).autoAnswer).toBeUndefined();
    expect(readScreen(trust, { workDir: "/home/user/project" }, false).autoAnswer).toBeUndefined();
  });

  test("the activity key ignores the status line's timer and the composer", () => {
    const working = pane("10-working-status");
    const later = working.replace("(2s • esc to interrupt)", "(7s • esc to interrupt)");
    const typed = working.replace("› Ask Codex to do anything", "› typing…");
    const key = readScreen(working).activityKey;
    expect(readScreen(later).activityKey).toBe(key);
    expect(readScreen(typed).activityKey).toBe(key);
    expect(readScreen(pane("11-interrupted")).activityKey).not.toBe(key);
  });
});

describe("which processes are Codex", () => {
  test("the native binary, or node running the npm launcher; nothing that only mentions it", () => {
    expect(
      isCodexProcess(["/usr/lib/node_modules/@openai/codex-linux-x64/vendor/bin/codex", "--no-daemon"]),
    ).toBe(true);
    expect(isCodexProcess(["codex"])).toBe(true);
    expect(isCodexProcess(["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "resume"])).toBe(true);
    expect(isCodexProcess(["bash", "-c", "codex --help"])).toBe(false);
    expect(isCodexProcess(["node", "/srv/my-codex-clone/index.js"])).toBe(false);
  });
});
