import { expect, test } from "bun:test";
import { type BriefParts, composeBrief } from "../../src/handoff/index.ts";

const parts: BriefParts = {
  from: { id: "s-1", name: "fix-tests", agent: "claude", workDir: "/work/app" },
  trigger: "rate_limit",
  note: "mind the flaky test",
  task: "Fix the failing test in src/app.ts",
  laterPrompts: ["Also update the README\nwith details", "run the tests"],
  turns: 3,
  toolCallsByName: { Read: 2, Edit: 5 },
  lastTurns: [
    { role: "user", kind: "prompt", text: "run the tests" },
    { role: "assistant", kind: "tool_use", text: '{"command":"npm test"}' },
    { role: "assistant", kind: "text", text: "2 tests fail\r\nstill\u0007" },
  ],
  changes: {
    source: "git diff against abc",
    files: ["M src/app.ts", "A notes.md (new, not in git yet)"],
    stat: null,
  },
  pending: { id: "perm-1", kind: "tool", tool: "Bash", detail: "npm test" },
};

test("a brief carries the task as first asked, a digest, the files changed, the last turns whole, what waited and the note", () => {
  const brief = composeBrief(parts);
  expect(brief).toContain("from another coding agent (claude, session fix-tests)");
  expect(brief).toContain("rate limits");
  expect(brief).toContain("## Note from the person handing it over\nmind the flaky test");
  expect(brief).toContain("## The task, as first asked\nFix the failing test in src/app.ts");
  expect(brief).toContain("3 turn(s); tools used: Edit ×5, Read ×2.");
  expect(brief).toContain("- Also update the README\n- run the tests");
  expect(brief).toContain(
    "## Files changed since the session began (git diff against abc)\n- M src/app.ts\n- A notes.md",
  );
  expect(brief).toContain('[assistant tool_use] {"command":"npm test"}');
  expect(brief).toContain(
    "## Left waiting\nThe previous agent was waiting on a tool permission (Bash): npm test",
  );
});

test("a brief is typeable: no control character but newline and tab", () => {
  const brief = composeBrief(parts);
  expect(brief).toContain("2 tests fail\nstill ");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  expect(brief).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
});

test("without prompts, turns or files a brief says so", () => {
  const brief = composeBrief({
    ...parts,
    note: null,
    task: null,
    laterPrompts: [],
    lastTurns: [],
    changes: { source: "not a git repository", files: [], stat: null },
    pending: null,
  });
  expect(brief).toContain("(no prompt was recorded)");
  expect(brief).toContain("(none found)");
  expect(brief).toContain("(no turns were recorded)");
  expect(brief).not.toContain("Left waiting");
  expect(brief).not.toContain("Note from");
});
