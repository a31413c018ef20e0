import { describe, expect, test } from "bun:test";
import { type PreflightFacts, planPreflight } from "../../scripts/preflight.ts";

const linux = (managers: string[], isRoot = false) => ({
  platform: "linux" as const,
  which: (c: string) => (managers.includes(c) ? `/usr/bin/${c}` : null),
  isRoot,
});

function facts(overrides: Partial<PreflightFacts>): PreflightFacts {
  return {
    missing: ["tmux", "chromium"],
    isRoot: false,
    sudoWorks: false,
    hasAptGet: true,
    install: linux(["apt-get"]),
    ...overrides,
  };
}

describe("npm test's preflight", () => {
  test("nothing missing: the tests run", () => {
    expect(planPreflight(facts({ missing: [] }))).toEqual({ kind: "ok" });
  });

  test("as root with apt-get: installs what is missing, without sudo", () => {
    expect(planPreflight(facts({ isRoot: true, install: linux(["apt-get"], true) }))).toEqual({
      kind: "install",
      commands: [
        ["apt-get", "update", "-qq"],
        ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "tmux", "chromium"],
      ],
    });
  });

  test("PostgreSQL's server missing (the fleet tests): Debian's postgresql package is installed", () => {
    const plan = planPreflight(
      facts({ missing: ["postgresql"], isRoot: true, install: linux(["apt-get"], true) }),
    );
    expect(plan).toEqual({
      kind: "install",
      commands: [
        ["apt-get", "update", "-qq"],
        ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "postgresql"],
      ],
    });
    const stop = planPreflight(facts({ missing: ["postgresql"], hasAptGet: false, install: linux(["dnf"]) }));
    expect(stop.kind === "stop" && stop.message.split("\n").at(-1)).toBe(
      "  sudo dnf install -y postgresql-server",
    );
  });

  test("password-less sudo: installs with sudo -n (never a password prompt)", () => {
    const plan = planPreflight(facts({ missing: ["tmux"], sudoWorks: true }));
    expect(plan).toEqual({
      kind: "install",
      commands: [
        ["sudo", "-n", "apt-get", "update", "-qq"],
        ["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "tmux"],
      ],
    });
  });

  test("no root and no password-less sudo: stops at once with the exact command", () => {
    const plan = planPreflight(facts({ missing: ["chromium"] }));
    expect(plan.kind).toBe("stop");
    if (plan.kind !== "stop") return;
    expect(plan.message).toContain("npm test needs chromium");
    expect(plan.message.split("\n").at(-1)).toBe("  sudo apt-get install -y chromium");
  });

  test("no apt-get (another distribution, macOS): stops with that system's command", () => {
    const plan = planPreflight(
      facts({ isRoot: true, hasAptGet: false, install: { ...linux(["brew"]), platform: "darwin" } }),
    );
    expect(plan.kind).toBe("stop");
    if (plan.kind !== "stop") return;
    expect(plan.message.split("\n").slice(-2)).toEqual([
      "  brew install tmux",
      "  brew install --cask chromium",
    ]);
  });
});
