import { describe, expect, test } from "bun:test";
import { GLOBAL_ARGS } from "../../src/cli/args.ts";
import { editDistance, nearest, renderCommandHelp, renderRootHelp } from "../../src/cli/help.ts";

const VERBS = [
  "run",
  "create",
  "list",
  "send",
  "approve",
  "reject",
  "answer",
  "read",
  "tail",
  "attach",
  "stop",
  "open",
];

describe("a mistyped command suggests the nearest", () => {
  test("typos, swaps and starts find the command; far-off words find nothing", () => {
    expect(nearest("lsit", VERBS)).toBe("list");
    expect(nearest("lst", VERBS)).toBe("list");
    expect(nearest("tial", VERBS)).toBe("tail");
    expect(nearest("aprove", VERBS)).toBe("approve");
    expect(nearest("att", VERBS)).toBe("attach");
    expect(nearest("STOP", VERBS)).toBe("stop");
    expect(nearest("deploy", VERBS)).toBeNull();
    expect(nearest("x", VERBS)).toBeNull();
  });

  test("edit distance counts an adjacent swap as one", () => {
    expect(editDistance("lsit", "list")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });
});

describe("--help lines its columns up", () => {
  const help = renderCommandHelp(
    "attach",
    { description: "Attach" },
    {
      ...GLOBAL_ARGS,
      session: { type: "positional", required: true, description: "The session", valueHint: "session" },
      "read-only": { type: "boolean", description: "Watch only", alias: ["r"] },
      stream: { type: "boolean", default: true, description: "Stream", negativeDescription: "Do not stream" },
    },
  );

  test("flags are left-aligned and every description starts in one column", () => {
    const rows = help.split("\n").filter((l) => /^ {2}[-<]/.test(l));
    expect(rows.length).toBe(7);
    const column = rows.map((r) => r.search(/(?<=\S {2,})\S/));
    expect(new Set(column).size).toBe(1);
    expect(help).toContain("  ag attach <session> [options]");
    expect(help).toMatch(/^ {2}-r, --read-only +Watch only$/m);
    expect(help).toMatch(/^ {2}--port <number> +Port of the ag server$/m);
    // A switch that is on by default is shown by how to turn it off, once.
    expect(help).toMatch(/^ {2}--no-stream +Do not stream$/m);
    expect(help).not.toMatch(/^ {2}--stream/m);
    expect(help).not.toMatch(/ $/m);
  });

  test("the root help groups the commands and aligns them with the server's flags", () => {
    const root = renderRootHelp("1.2.3", GLOBAL_ARGS, [
      { title: "SESSIONS", commands: [{ name: "run", description: "Run it" }] },
      { title: "SERVER", commands: [{ name: "stop", description: "Stop it" }] },
    ]);
    expect(root).toStartWith("ag 1.2.3 — ");
    const run = root.split("\n").find((l) => l.startsWith("  run"))!;
    const port = root.split("\n").find((l) => l.startsWith("  --port"))!;
    expect(run.indexOf("Run it")).toBe(port.indexOf("Port of"));
    expect(root).toContain("\nSERVER\n  stop");
  });
});
