import { expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { compareVersions } from "../../src/agents/versions.ts";
import { startMockModel } from "../fakes/mock-model.ts";
import { agentEnv, claudeVersion, launchAgentPane, seedAgentHome } from "../helpers/agent-home.ts";
import { tempDir } from "../helpers/temp.ts";
import { privateSocket } from "../helpers/tmux.ts";

// The pieces fit: a seeded HOME, the mock model, the real Claude Code in tmux, the screen reader.
test("the real Claude Code starts at the prompt and answers through the mock model", async () => {
  const root = tempDir("ag-agent-");
  const home = join(root, "home");
  const work = join(root, "work");
  mkdirSync(work, { recursive: true });
  seedAgentHome(home, { trust: [work] });
  const mock = startMockModel();
  const sessionId = crypto.randomUUID();
  const pane = launchAgentPane({
    socket: privateSocket(),
    workDir: work,
    env: agentEnv(home, mock.url),
    // As ag launches it: 2.1.328 starts in auto mode when no mode is named.
    args: ["--session-id", sessionId, "--permission-mode", "default"],
  });
  try {
    const started = await pane.waitFor((s) => s.state === "idle", "the idle prompt", 30_000);
    expect(started.state).toMatchObject({ mode: "default", input: "" });

    await pane.submit("say hello");
    const { text } = await pane.waitFor(
      (s, screen) => s.state === "idle" && screen.includes("Hello from the mock model!"),
      "the reply",
      30_000,
    );
    expect(text).toContain("❯ say hello");

    const main = mock.requests().filter((r) => r.kind === "main");
    expect(main.map((r) => [r.prompt, r.rule, r.status])).toEqual([["say hello", "hello", 200]]);
    expect(main[0]!.tools).toContain("Bash");
    // 2.1.197 probes the base URL before anything else; 2.1.328 sends its first prompt straight away.
    const first = compareVersions(claudeVersion(), "2.1.328") >= 0 ? main[0] : { method: "HEAD", path: "/" };
    expect(mock.requests()[0]).toMatchObject(first!);
    const transcript = join(
      home,
      ".claude",
      "projects",
      work.replace(/[^a-zA-Z0-9]/g, "-"),
      `${sessionId}.jsonl`,
    );
    expect(existsSync(transcript)).toBe(true);
  } finally {
    await pane.kill();
    await mock.stop();
  }
}, 90_000);
