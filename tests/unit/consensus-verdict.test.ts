import { describe, expect, test } from "bun:test";
import { readAnswer } from "../../src/consensus/answer.ts";
import { restateBrief, reviewBrief } from "../../src/consensus/brief.ts";
import { typeable } from "../../src/consensus/change.ts";
import type { Reviewer } from "../../src/consensus/consensus.ts";
import { newReviewer } from "../../src/consensus/consensus.ts";
import { tally } from "../../src/consensus/verdict.ts";

const CRITERIA = ["tests pass", "no secrets", "docs updated"];

describe("reading a reviewer's answer", () => {
  test("the form as asked, with a preamble and markdown around it", () => {
    const text = [
      "I read the diff and the files.",
      "",
      "**CRITERION 1: PASS** — all green",
      "- Criterion 2: FAIL - a token in config.ts",
      "> CRITERION 3: pass: README mentions it",
      "",
      "**VERDICT: REJECT**",
    ].join("\n");
    expect(readAnswer(text, CRITERIA)).toEqual({
      ok: true,
      answer: {
        verdict: "reject",
        criteria: [
          { criterion: "tests pass", pass: true, note: "all green" },
          { criterion: "no secrets", pass: false, note: "a token in config.ts" },
          { criterion: "docs updated", pass: true, note: "README mentions it" },
        ],
      },
    });
  });

  test("numbered lines without the word, and the last verdict line counts", () => {
    const text = "1. PASS fine\n2) PASS ok\n3: FAIL missing\nVerdict: approve\nFinal verdict: REJECT";
    const read = readAnswer(text, CRITERIA);
    expect(read.ok && read.answer.verdict).toBe("reject");
    // The criterion's own words echoed in parentheses are not its answer.
    const echoed = readAnswer(
      'Criterion 1 (tests pass): FAIL — red\n2 "no secrets": PASS\n3. PASS\nVERDICT: REJECT',
      CRITERIA,
    );
    expect(echoed.ok && echoed.answer.criteria.map((c) => c.pass)).toEqual([false, true, true]);
  });

  test("prose, a missing criterion or a missing verdict is not read (never guessed)", () => {
    expect(readAnswer("Looks good to me, I approve.", CRITERIA)).toEqual({
      ok: false,
      reason: "no PASS or FAIL for CRITERION 1, CRITERION 2, CRITERION 3",
    });
    expect(readAnswer("CRITERION 1: PASS\nCRITERION 3: PASS\nVERDICT: APPROVE", CRITERIA)).toEqual({
      ok: false,
      reason: "no PASS or FAIL for CRITERION 2",
    });
    expect(readAnswer("CRITERION 1: PASS\nCRITERION 2: PASS\nCRITERION 3: PASS", CRITERIA)).toEqual({
      ok: false,
      reason: "no VERDICT: APPROVE or REJECT line",
    });
    // A criterion the review does not have is no answer to one it has.
    expect(readAnswer("CRITERION 4: PASS\nVERDICT: APPROVE", ["only one"]).ok).toBe(false);
  });
});

function reviewer(index: number, verdict: "approve" | "reject" | null, passes: boolean[] = []): Reviewer {
  return {
    ...newReviewer(index, "claude"),
    sessionId: `s${index}`,
    status: verdict ? "done" : "unparsable",
    verdict,
    criteria: passes.map((pass, i) => ({ criterion: CRITERIA[i]!, pass, note: "" })),
  };
}

describe("the verdict", () => {
  test("the majority of the read answers, with the share that agrees; per criterion too", () => {
    const result = tally(CRITERIA, [
      reviewer(1, "approve", [true, true, false]),
      reviewer(2, "approve", [true, false, false]),
      reviewer(3, "reject", [true, false, true]),
    ]);
    expect(result).toEqual({
      verdict: "approve",
      agreement: 0.6667,
      counted: 3,
      criteriaVerdicts: [
        { criterion: "tests pass", verdict: "pass", pass: 3, fail: 0, agreement: 1 },
        { criterion: "no secrets", verdict: "fail", pass: 1, fail: 2, agreement: 0.6667 },
        { criterion: "docs updated", verdict: "fail", pass: 1, fail: 2, agreement: 0.6667 },
      ],
    });
  });

  test("a tie is split at one half; unread answers count neither way; none read is no verdict", () => {
    const split = tally(
      ["x"],
      [reviewer(1, "approve", [true]), reviewer(2, "reject", [false]), reviewer(3, null)],
    );
    expect(split).toMatchObject({ verdict: "split", agreement: 0.5, counted: 2 });
    expect(split.criteriaVerdicts[0]).toMatchObject({ verdict: "split", agreement: 0.5 });
    expect(tally(["x"], [reviewer(1, null)])).toEqual({
      verdict: null,
      agreement: null,
      counted: 0,
      criteriaVerdicts: [],
    });
  });
});

describe("the brief", () => {
  test("criteria numbered, the change and the answer fenced, the form to answer in; control characters made typeable", () => {
    const brief = reviewBrief({
      reviewers: 3,
      sessionName: "api",
      criteria: ["tests\npass", "no secrets"],
      change: {
        change: { kind: "git", base: "abc", files: ["a.ts"], bytes: 10, truncated: false },
        description: "a git diff",
        text: "+const a = 1;",
      },
      lastAnswer: "Done.\u001b[2J",
    });
    expect(brief).toContain("You are one of 3 independent reviewers");
    expect(brief).toContain("1. tests pass\n2. no secrets");
    expect(brief).toContain("<<<CHANGE\n+const a = 1;\nCHANGE>>>");
    expect(brief).toContain("<<<ANSWER\nDone.\ufffd[2J\nANSWER>>>");
    expect(
      brief.endsWith("CRITERION 2: PASS or FAIL — one line saying why\nVERDICT: APPROVE or REJECT"),
    ).toBe(true);
    expect(restateBrief("no VERDICT line", 1)).toContain("could not be read (no VERDICT line)");
    expect(typeable("a\r\nb\rc\u0007")).toBe("a\nb\nc\ufffd");
  });
});
