import { describe, expect, test } from "bun:test";
import type { AgentAdapter } from "../../src/agents/agent.ts";
import { agentAdapters, createAgentRegistry } from "../../src/agents/index.ts";
import { hasFlag, missingFlagsWarning, probeOf, unverifiedWarning } from "../../src/agents/probe.ts";
import { byVersion, compareVersions, isVerified, versionNumber } from "../../src/agents/versions.ts";

const claude = () => agentAdapters().find((a) => a.name === "claude")!;

describe("agent CLI versions", () => {
  test("the version number in a CLI's version line", () => {
    expect(versionNumber("2.1.197 (Claude Code)")).toBe("2.1.197");
    expect(versionNumber("codex-cli 0.169.0")).toBe("0.169.0");
    expect(versionNumber("1.18.33-beta.1")).toBe("1.18.33-beta.1");
    expect(versionNumber("opencode v1.18.33\nmore")).toBe("1.18.33");
    expect(versionNumber("nightly")).toBe("nightly");
    expect(versionNumber("  ")).toBeNull();
    expect(versionNumber(null)).toBeNull();
  });

  test("versions compare numerically part by part; a pre-release comes before its release", () => {
    expect(compareVersions("2.1.10", "2.1.9")).toBeGreaterThan(0);
    expect(compareVersions("2.1.197", "2.1.328")).toBeLessThan(0);
    expect(compareVersions("0.61.0", "0.61.0")).toBe(0);
    expect(compareVersions("1.2", "1.2.0")).toBe(0);
    expect(compareVersions("1.18.33-beta.1", "1.18.33")).toBeLessThan(0);
    expect(compareVersions("1.18.33", "1.18.33-beta.1")).toBeGreaterThan(0);
    expect(compareVersions("1.0.0-alpha", "1.0.0-beta")).toBeLessThan(0);
    const sorted = ["2.1.328", "2.1.44", "2.1.197", "2.0.0-rc.1", "2.0.0"].sort(compareVersions);
    expect(sorted).toEqual(["2.0.0-rc.1", "2.0.0", "2.1.44", "2.1.197", "2.1.328"]);
  });

  test("verified means one of the exact versions; unknown is not verified", () => {
    expect(isVerified(["2.1.197", "2.1.328"], "2.1.328")).toBe(true);
    expect(isVerified(["2.1.197", "2.1.328"], "2.1.329")).toBe(false);
    expect(isVerified(["2.1.197"], null)).toBe(false);
    expect(isVerified([], "1.0.0")).toBe(false);
  });

  test("byVersion takes the latest step not after the version; unknown the newest, older than all the oldest", () => {
    const steps = [
      { since: "2.1.300", value: "new" },
      { since: "2.1.0", value: "old" },
      { since: "2.1.200", value: "middle" },
    ];
    expect(byVersion("2.1.197", steps)).toBe("old");
    expect(byVersion("2.1.200", steps)).toBe("middle");
    expect(byVersion("2.1.299", steps)).toBe("middle");
    expect(byVersion("2.1.328", steps)).toBe("new");
    expect(byVersion("3.0.0", steps)).toBe("new");
    expect(byVersion(null, steps)).toBe("new");
    expect(byVersion("1.0.0", steps)).toBe("old");
    expect(() => byVersion("1.0.0", [])).toThrow();
  });
});

describe("an agent's probe", () => {
  test("flags are found as options of a help text, not inside other words", () => {
    const help = [
      "Usage: cli [options]",
      "  -c, --config <key=value>   set a value",
      "  --settings <file-or-json>  load settings",
      "  -r, --resume [value]",
      "      --no-daemon",
      "  see --permission-mode.",
    ].join("\n");
    for (const flag of ["-c", "--config", "--settings", "-r", "--resume", "--no-daemon", "--permission-mode"])
      expect(hasFlag(help, flag)).toBe(true);
    for (const flag of ["--session-id", "-s", "--resume-last", "--daemon", "--setting"])
      expect(hasFlag(help, flag)).toBe(false);
  });

  test("a probe lists each flag ag launches the CLI with; hooks need the capability and no flag missing", () => {
    const adapter = claude();
    const all = adapter.probeFlags!.map((f) => `  ${f} <value>`).join("\n");
    const at = new Date("2026-01-02T03:04:05Z");
    const full = probeOf(adapter, all, at);
    expect(full).toEqual({
      at: "2026-01-02T03:04:05.000Z",
      flags: Object.fromEntries(adapter.probeFlags!.map((f) => [f, true])),
      missingFlags: [],
      acp: true,
      hooks: true,
    });
    const lacking = probeOf(adapter, all.replace("--settings", "--other"), at);
    expect(lacking).toMatchObject({ missingFlags: ["--settings"], hooks: false, acp: true });
    expect(lacking.flags["--settings"]).toBe(false);
    const codex = agentAdapters().find((a) => a.name === "codex")!;
    expect(probeOf(codex, "", at)).toMatchObject({ acp: false, hooks: false });
  });

  test("the warnings: an unverified version names the verified ones; a verified or unknown one says nothing", () => {
    const adapter = { ...claude(), verifiedVersions: ["2.1.197", "2.1.328"] } as AgentAdapter;
    expect(unverifiedWarning("web-1", adapter, "2.1.332")).toBe(
      "session web-1: claude 2.1.332 is not a verified version (verified: 2.1.197, 2.1.328); running it anyway",
    );
    expect(unverifiedWarning("web-1", adapter, "2.1.328")).toBeNull();
    expect(unverifiedWarning("web-1", adapter, null)).toBeNull();
    expect(missingFlagsWarning(adapter, "2.1.332", ["--settings"])).toBe(
      "claude 2.1.332 lacks a flag ag launches it with: --settings (its --help); its sessions may fail to start or to report",
    );
  });
});

describe("the registry and versions", () => {
  /** An adapter whose behaviour differs by version, as a real one may. */
  function versioned(): AgentAdapter {
    const base = claude();
    const older: AgentAdapter = { ...base, displayName: "Claude Code (older)", probeFlags: ["--old-flag"] };
    const adapter: AgentAdapter = {
      ...base,
      verifiedVersions: ["2.1.197", "2.1.328"],
      forVersion: (version) => (version?.startsWith("2.0.") ? older : adapter),
    };
    return adapter;
  }

  test("a CLI that is there but tells no version in time (a loaded machine) is installed, its version unknown", async () => {
    const registry = createAgentRegistry([versioned()], { probe: async () => "" });
    expect((await registry.describe())[0]).toMatchObject({ installed: true, version: null, verified: null });
    expect(await registry.launchVersion("claude", { agentCommand: null })).toBeNull();
  });

  test("get with a version is the adapter for that version; without one, the adapter itself", () => {
    const adapter = versioned();
    const registry = createAgentRegistry([adapter], { probe: async () => null });
    expect(registry.get("claude")).toBe(adapter);
    expect(registry.get("claude", "2.0.5").displayName).toBe("Claude Code (older)");
    expect(registry.get("claude", null)).toBe(adapter);
    expect(() => registry.get("nosuch", "1.0.0")).toThrow("unknown agent");
  });

  test("describe: verified versions, whether the installed one is, and the probe of its help (warned once)", async () => {
    const warnings: string[] = [];
    const helps: string[] = [];
    let installed = "2.1.332 (Claude Code)";
    const registry = createAgentRegistry([versioned(), agentAdapters().find((a) => a.name === "codex")!], {
      probe: async (command) => (command === "claude" ? installed : null),
      help: async (command) => {
        helps.push(command);
        return "  --session-id <id>\n  --permission-mode <m>\n  --resume\n  --fork-session\n";
      },
      warn: (line) => warnings.push(line),
      now: () => new Date("2026-01-02T00:00:00Z"),
    });
    const [before] = await registry.describe();
    expect(before).toMatchObject({ version: "2.1.332", verified: false, probe: null });
    await registry.probeClis();
    await registry.probeClis();
    const [claudeInfo, codexInfo] = await registry.describe();
    expect(claudeInfo).toMatchObject({
      installed: true,
      version: "2.1.332",
      verifiedVersions: ["2.1.197", "2.1.328"],
      verified: false,
      probe: {
        at: "2026-01-02T00:00:00.000Z",
        missingFlags: ["--settings"],
        acp: true,
        hooks: false,
      },
    });
    expect(claudeInfo!.probe!.flags).toEqual({
      "--session-id": true,
      "--settings": false,
      "--permission-mode": true,
      "--resume": true,
      "--fork-session": true,
    });
    // Not installed: nothing to verify, nothing probed.
    expect(codexInfo).toMatchObject({
      installed: false,
      verified: null,
      probe: null,
      verifiedVersions: ["0.169.0", "0.171.0"],
    });
    expect(helps).toEqual(["claude", "claude"]);
    expect(warnings).toEqual([
      "claude 2.1.332 lacks a flag ag launches it with: --settings (its --help); its sessions may fail to start or to report",
    ]);
    // The version's own adapter says which flags to look for.
    installed = "2.0.9";
    const fresh = createAgentRegistry([versioned()], {
      probe: async () => installed,
      help: async () => "  --old-flag\n",
    });
    await fresh.probeClis();
    expect((await fresh.describe())[0]).toMatchObject({
      verified: false,
      probe: { flags: { "--old-flag": true }, missingFlags: [] },
    });
  });

  test("launchVersion reads the CLI the launch runs, on the agent's PATH; a wrapper is taken to run the CLI on PATH", async () => {
    const asked: Array<{ command: string; path?: string }> = [];
    const registry = createAgentRegistry([claude()], {
      probe: async (command, _flag, _pkg, options) => {
        asked.push({ command, path: options?.path });
        return "2.1.197 (Claude Code)";
      },
    });
    expect(await registry.launchVersion("claude", { agentCommand: null, path: "/agent/bin" })).toBe(
      "2.1.197",
    );
    expect(await registry.launchVersion("claude", { agentCommand: "/opt/cc/bin/claude --model opus" })).toBe(
      "2.1.197",
    );
    expect(await registry.launchVersion("claude", { agentCommand: "bun fake-agent.ts" })).toBe("2.1.197");
    expect(asked).toEqual([
      { command: "claude", path: "/agent/bin" },
      { command: "/opt/cc/bin/claude", path: undefined },
      { command: "claude", path: undefined },
    ]);
  });

  test("launchVersion gives up on a CLI that does not answer in time", async () => {
    const registry = createAgentRegistry([claude()], { probe: () => new Promise(() => {}) });
    const started = Date.now();
    expect(await registry.launchVersion("claude", { agentCommand: null })).toBeNull();
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
