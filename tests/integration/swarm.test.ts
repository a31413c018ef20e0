import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isClaudeProcess } from "../../src/agents/claude/adapter.ts";
import { toSession } from "../../src/sessions/index.ts";
import { agentProcesses, listProcesses, sessionTree } from "../../src/swarm/index.ts";
import { sampleSession } from "../helpers/app.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

/** A /proc of our own making: pid → {argv, ppid, cwd}. */
function fakeProc(processes: Record<number, { argv: string[]; ppid: number; cwd: string; comm?: string }>) {
  const root = tempDir("ag-proc-");
  for (const [pid, p] of Object.entries(processes)) {
    const dir = join(root, pid);
    mkdirSync(dir);
    writeFileSync(join(dir, "cmdline"), `${p.argv.join("\0")}\0`);
    writeFileSync(join(dir, "stat"), `${pid} (${p.comm ?? "x y) z"}) S ${p.ppid} 1 1 0`);
    symlinkSync(p.cwd, join(dir, "cwd"));
  }
  mkdirSync(join(root, "self"));
  return root;
}

describe("the swarm", () => {
  test("agent processes are recognised by their program, not by a mention", () => {
    expect(isClaudeProcess(["claude", "--session-id", "x"])).toBe(true);
    expect(isClaudeProcess(["/usr/lib/node_modules/@anthropic-ai/claude-code-linux-x64/claude"])).toBe(true);
    expect(isClaudeProcess(["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"])).toBe(true);
    expect(isClaudeProcess(["sh", "-c", "claude --help"])).toBe(false);
    expect(isClaudeProcess(["vim", "claude.md"])).toBe(false);
  });

  test("/proc is read: argv, parent (comm with spaces and parentheses), cwd", async () => {
    const root = fakeProc({ 10: { argv: ["claude", "-p", "hi there"], ppid: 7, cwd: "/work/a" } });
    expect(await listProcesses(root)).toEqual([
      { pid: 10, ppid: 7, argv: ["claude", "-p", "hi there"], cwd: "/work/a" },
    ]);
    expect(await listProcesses(join(root, "missing"))).toEqual([]);
  });

  test("a process is managed when it is a pane's process or runs under one", () => {
    const processes = [
      { pid: 100, ppid: 1, argv: ["claude"], cwd: "/a" }, // a pane's own process
      { pid: 200, ppid: 1, argv: ["sh"], cwd: "/b" }, // another pane's shell…
      { pid: 201, ppid: 200, argv: ["node", "/x/@anthropic-ai/claude-code/cli.js"], cwd: "/b" }, // …runs claude
      { pid: 300, ppid: 1, argv: ["claude"], cwd: "/c" }, // started by someone else
      { pid: 400, ppid: 1, argv: ["bash"], cwd: "/d" },
    ];
    const panes = [
      { pid: 100, tag: "s-a" },
      { pid: 200, tag: "s-b" },
    ];
    expect(agentProcesses(processes, panes, [{ name: "claude", isAgentProcess: isClaudeProcess }])).toEqual([
      { pid: 100, agent: "claude", command: "claude", cwd: "/a", managed: true, sessionId: "s-a" },
      {
        pid: 201,
        agent: "claude",
        command: "node /x/@anthropic-ai/claude-code/cli.js",
        cwd: "/b",
        managed: true,
        sessionId: "s-b",
      },
      { pid: 300, agent: "claude", command: "claude", cwd: "/c", managed: false, sessionId: null },
    ]);
  });

  test("sessions form a tree by parentId; an orphan is a root", () => {
    const root = sampleSession();
    const child = sampleSession({ parentId: root.id });
    const grandchild = sampleSession({ parentId: child.id });
    const orphan = sampleSession({ parentId: crypto.randomUUID() });
    const tree = sessionTree([root, child, grandchild, orphan].map(toSession));
    expect(tree.map((n) => n.id)).toEqual([root.id, orphan.id]);
    expect(tree[0]!.children[0]!.id).toBe(child.id);
    expect(tree[0]!.children[0]!.children[0]!.id).toBe(grandchild.id);
  });

  test("GET /v1/swarm on the real system finds an agent process nobody manages", async () => {
    const bin = tempDir("ag-bin-");
    symlinkSync(Bun.which("sleep")!, join(bin, "claude"));
    const cwd = tempDir("ag-cwd-");
    const stray = Bun.spawn([join(bin, "claude"), "30"], { cwd });
    const runtime = await startTestRuntime();
    try {
      const swarm = await (await fetch(`${runtime.url}/v1/swarm`)).json();
      expect(swarm.processes).toContainEqual({
        pid: stray.pid,
        agent: "claude",
        command: `${join(bin, "claude")} 30`,
        cwd,
        managed: false,
        sessionId: null,
      });
      expect(swarm.sessions).toEqual([]);
      expect(swarm.summary.unmanaged).toBeGreaterThanOrEqual(1);
    } finally {
      stray.kill();
      await runtime.drain(100);
      runtime.close();
    }
  });
});
