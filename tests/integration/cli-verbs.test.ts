import { describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { CreateSessionInput } from "../../src/sessions/index.ts";
import { ag, insert, serve } from "../helpers/cli.ts";
import { hook, idleSession, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * The verbs that drive a session — send, approve, reject, answer, interrupt, escape, open —
 * as real processes against the real app (fake tmux, simulated agent screens, the agent's hooks
 * played by the test). Sessions are named by name, id or id prefix, as a person would.
 */

const ASK = {
  tool_name: "AskUserQuestion",
  tool_input: {
    questions: [
      {
        question: "Which color should the button be?",
        header: "Color",
        options: [
          { label: "Red", description: "A bold red button" },
          { label: "Blue", description: "A calm blue button" },
        ],
        multiSelect: false,
      },
    ],
  },
};

async function running() {
  const { ag: app, port } = serve({ supervise: true });
  simulateAgents(app);
  const { id, paneId } = await idleSession(app);
  const name = app.repo.get(id)!.name;
  return { app, port, id, paneId, name, typed: () => app.tmux.typed(paneId) };
}

describe("ag approve and ag reject", () => {
  test("answer the pending permission of a session named by its name or id prefix", async () => {
    const { app, port, id, name, typed } = await running();
    await hook(app, id, "UserPromptSubmit", { prompt: "clean up", prompt_id: "p1" });
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "rm -rf build" } });
    const approved = await ag(["approve", name, "--port", port]);
    expect(approved.exitCode).toBe(0);
    expect(approved.stdout).toStartWith(`approved Bash: rm -rf build in ${name}`);
    expect(typed().at(-1)).toBe("Enter");

    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    const rejected = await ag(["reject", id.slice(0, 6), "--port", port]);
    expect(rejected.exitCode).toBe(0);
    expect(rejected.stdout).toStartWith(`rejected Bash: ls in ${name}`);
    expect(typed().at(-1)).toBe("Escape");
  });

  test("nothing waiting, or a question instead: exit 1 with what to do", async () => {
    const { app, port, id, name } = await running();
    const none = await ag(["approve", name, "--port", port]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain("[NO_PENDING_PERMISSION]");

    await hook(app, id, "UserPromptSubmit", { prompt: "ask me", prompt_id: "q1" });
    await hook(app, id, "PermissionRequest", ASK);
    const wrong = await ag(["approve", name, "--port", port]);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain(`ag answer ${id.slice(0, 8)} <number>`);
    expect(wrong.stderr).toContain("[USAGE_ERROR]");
  });
});

describe("ag answer", () => {
  test("a number picks that option; an option the question lacks is refused with the options", async () => {
    const { app, port, id, name, typed } = await running();
    await hook(app, id, "UserPromptSubmit", { prompt: "ask me", prompt_id: "q1" });
    await hook(app, id, "PermissionRequest", ASK);
    const missing = await ag(["answer", name, "5", "--port", port]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("has no option 5: 1. Red · 2. Blue");

    const before = typed().length;
    const answered = await ag(["answer", name, "2", "--port", port]);
    expect(answered.exitCode).toBe(0);
    expect(answered.stdout).toMatch(
      /^answered Which color should the button be\? — 1\. Red · 2\. Blue in .*: 2\. Blue$/m,
    );
    expect(typed().slice(before)).toContain("2");
  });

  test("--text answers in one's own words; neither or both is a usage error", async () => {
    const { app, port, id, name, typed } = await running();
    await hook(app, id, "UserPromptSubmit", { prompt: "ask me", prompt_id: "q1" });
    await hook(app, id, "PermissionRequest", ASK);
    const answered = await ag(["answer", id, "--text", "Green please", "--port", port]);
    expect(answered.exitCode).toBe(0);
    expect(answered.stdout).toContain(': "Green please"');
    expect(typed().join("")).toContain("Green please");
    for (const args of [[name], [name, "1", "--text", "x"]]) {
      const bad = await ag(["answer", ...args, "--port", port]);
      expect(bad.exitCode).toBe(1);
      expect(bad.stderr).toContain("[USAGE_ERROR]");
    }
  });
});

describe("ag send", () => {
  test("- reads the message from stdin: several lines are pasted as one message", async () => {
    const { app, port, id, name, paneId } = await running();
    const sent = await ag(
      ["send", name, "-", "--port", port],
      undefined,
      undefined,
      "first line\nsecond line\n",
    );
    expect(sent.exitCode).toBe(0);
    expect(sent.stdout).toBe(`sent to ${name} (1 attempt)\n`);
    expect(sent.stderr).toContain(`ag tail ${id.slice(0, 8)}`);
    const pastes = app.tmux.inputs(paneId).filter((i) => i.kind === "paste");
    expect(pastes.map((p) => (p as { text: string }).text)).toEqual(["first line\nsecond line"]);
  });

  test("during a permission prompt the server's refusal is the error; an empty message is refused", async () => {
    const { app, port, id, name } = await running();
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    const busy = await ag(["send", name, "hello", "--port", port]);
    expect(busy.exitCode).toBe(1);
    expect(busy.stderr).toContain("[SESSION_BUSY]");
    const empty = await ag(["send", name, "-", "--port", port], undefined, undefined, "\n");
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain("the message is empty");
  });
});

describe("ag interrupt and ag escape", () => {
  test("press Ctrl+C and Escape in the agent; interrupting an idle session is refused", async () => {
    const { app, port, id, name, typed } = await running();
    const idle = await ag(["interrupt", name, "--port", port]);
    expect(idle.exitCode).toBe(1);
    expect(idle.stderr).toContain("nothing to interrupt");
    await hook(app, id, "UserPromptSubmit", { prompt: "work hard", prompt_id: "w1" });
    await until(() => app.repo.get(id)!.status === "working");
    // The route answers at once (still working); the CLI waits for the turn to stop and says so.
    const interrupting = ag(["interrupt", name, "--port", port]);
    await until(() => typed().includes("C-c"), 10_000);
    await hook(app, id, "Stop", {});
    const interrupted = await interrupting;
    expect(interrupted.exitCode).toBe(0);
    expect(interrupted.stdout).toBe(`interrupted ${name} (now idle)\n`);
    const escaped = await ag(["escape", name, "--port", port]);
    expect(escaped.exitCode).toBe(0);
    expect(escaped.stdout).toStartWith(`pressed Escape in ${name}`);
    expect(typed().at(-1)).toBe("Escape");
  });
});

describe("ag fork and ag resume", () => {
  test("fork starts a copy of the conversation; resume brings an ended session back under its id", async () => {
    const { app, port, id, name } = await running();
    // The conversation both carry on: the agent's transcript so far.
    const transcript = join(tempDir(), `${id}.jsonl`);
    copyFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), transcript);
    app.repo.update(id, { transcriptPath: transcript });

    const forked = await ag(["fork", name, "--port", port, "--json"]);
    expect(forked.exitCode).toBe(0);
    const copy = JSON.parse(forked.stdout) as { id: string; name: string; forkedFrom: string };
    expect(copy).toMatchObject({ name: `${name}-fork`, forkedFrom: id });
    expect(copy.id).not.toBe(id);

    await ag(["kill", name, "--port", port]);
    const resumed = await ag(["resume", id.slice(0, 8), "--port", port]);
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^ {2}id\\s+${id}$`, "m"));
    expect(app.repo.get(id)!.status).not.toBe("killed");

    const again = await ag(["resume", id, "--port", port]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("nothing to resume");
  });
});

describe("ag open, ag read and ag attach, by name", () => {
  test("open prints the session's page (or the dashboard) and opens nothing without a desktop", async () => {
    const { ag: app, port } = serve();
    const session = insert(app, { name: "reviewer", status: "idle" });
    const page = await ag(["open", "reviewer", "--port", port]);
    expect(page.exitCode).toBe(0);
    expect(page.stdout).toBe(`http://127.0.0.1:${port}/dashboard/#/sessions/${session.id}\n`);
    expect(page.stderr).not.toContain("opened");
    const root = await ag(["open", "--port", port]);
    expect(root.stdout).toBe(`http://127.0.0.1:${port}/dashboard/\n`);
  });

  test("read by name leaves out empty entries and says how many", async () => {
    const { ag: app, port } = serve();
    const dir = tempDir();
    const transcriptPath = join(dir, "t.jsonl");
    copyFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), transcriptPath);
    insert(app, { name: "sampled", status: "completed", transcriptPath, workDir: dir });
    const read = await ag(["read", "sampled", "--port", port]);
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toMatch(/empty entr(y|ies) left out/);
    // Every heading that is shown has something under it, or says something on its own.
    const lines = read.stdout.split("\n");
    lines.forEach((line, i) => {
      if (/^#\d+ .*· (system|text|other)$/.test(line)) expect(lines[i + 1]).toMatch(/^ {4}\S/);
    });
  });

  test("attach refuses when not at a terminal, and a name nobody has is not found", async () => {
    const { ag: app, port } = serve();
    insert(app, { name: "watched", status: "idle" });
    const piped = await ag(["attach", "watched", "--port", port]);
    expect(piped.exitCode).toBe(1);
    expect(piped.stderr).toContain("ag attach needs a terminal");
    const missing = await ag(["read", "nobody", "--port", port]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("[SESSION_NOT_FOUND]");
  });
});

describe("ag create --new", () => {
  test("asks for a new session beside an idle one (a server without `reuse` is named as the reason)", async () => {
    const { app, port, id, name } = await running();
    const workDir = app.repo.get(id)!.workDir;
    const reused = await ag(["create", "again", "--cwd", workDir, "--port", port]);
    expect(reused.exitCode).toBe(0);
    expect(reused.stderr).toContain(
      `reused the idle session ${name} (${id.slice(0, 8)}) in ${workDir}; --new starts a fresh one`,
    );
    const fresh = await ag(["create", "again", "--new", "--json", "--cwd", workDir, "--port", port]);
    if ("reuse" in CreateSessionInput.properties) {
      expect(fresh.exitCode).toBe(0);
      expect(JSON.parse(fresh.stdout)).toMatchObject({ reused: false, workDir });
    } else {
      expect(fresh.exitCode).toBe(1);
      expect(fresh.stderr).toContain("this ag server does not know --new yet");
    }
  });
});

describe("mistakes", () => {
  test("an unknown command suggests the nearest; an unknown option too", async () => {
    const typo = await ag(["lsit"]);
    expect(typo.exitCode).toBe(1);
    expect(typo.stderr).toBe('ag: unknown command "lsit" (did you mean `ag list`?) [USAGE_ERROR]\n');
    const flag = await ag(["list", "--al"]);
    expect(flag.stderr).toContain("unknown option --al (did you mean --all?)");
    const nothing = await ag(["frobnicate"]);
    expect(nothing.stderr).toContain("(see ag --help)");
  });

  test("stop with no server running says so and exits 0; a server the state directory does not know is refused", async () => {
    const none = await ag(["stop"]);
    expect(none.exitCode).toBe(0);
    expect(none.stdout).toMatch(/^no ag server runs for /);
    const { port } = serve();
    const stranger = await ag(["stop", "--port", port]);
    expect(stranger.exitCode).toBe(1);
    expect(stranger.stderr).toContain("runs with another state directory");
  });
});
