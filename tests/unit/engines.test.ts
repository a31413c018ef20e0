import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The Node.js floor the README and package.json state is true: every package `npm ci` installs
 * accepts the lowest Node of each line the floor admits, so npm prints no EBADENGINE warning there.
 * (ag itself runs on Bun; Node runs npm and the agent CLIs.)
 */
const root = join(import.meta.dir, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));

/** The lowest version of each `||` alternative of a range like `^20.19.0 || >=22.12.0`. */
function lowest(range: string): string[] {
  return range.split("||").map((part) => part.trim().replace(/^(\^|>=|~)/, ""));
}

describe("the Node.js floor", () => {
  test("package.json's engines is the floor the README states", () => {
    expect(pkg.engines.node).toBe("^20.19.0 || >=22.12.0");
    expect(readFileSync(join(root, "README.md"), "utf8")).toContain("Node 20.19 or later");
  });

  for (const node of lowest(pkg.engines.node)) {
    test(`every installed package accepts Node ${node}`, () => {
      const refusing = Object.entries(
        lock.packages as Record<string, { engines?: { node?: string }; optional?: boolean }>,
      )
        .filter(([path, meta]) => path !== "" && !meta.optional && typeof meta.engines?.node === "string")
        .filter(([, meta]) => !Bun.semver.satisfies(node, meta.engines!.node!))
        .map(([path, meta]) => `${path.replace(/^.*node_modules\//, "")} (${meta.engines!.node})`);
      expect(refusing).toEqual([]);
    });
  }
});
