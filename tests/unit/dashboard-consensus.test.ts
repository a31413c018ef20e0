import { describe, expect, test } from "bun:test";
import { consensusSummary, type Outcome, percent } from "../../public/src/format.ts";
import type { Reviewer } from "../../src/consensus/consensus.ts";

/** The dashboard's one line for a review (the page's banner, the session page's list). */
const reviewer = (verdict: Reviewer["verdict"], status: Reviewer["status"] = "done") =>
  ({ status, verdict }) as Reviewer;

const review = (over: Partial<Outcome>): Outcome => ({
  status: "completed",
  verdict: "approve",
  agreement: 1,
  counted: 0,
  reviewers: [],
  ...over,
});

describe("a review's outcome in one line", () => {
  test("a majority: the verdict, who agrees of those counted, and the share", () => {
    const reviewers = [reviewer("approve"), reviewer("approve"), reviewer("reject")];
    expect(consensusSummary(review({ reviewers, counted: 3, agreement: 0.6667 }))).toBe(
      "APPROVE — 2 of 3 agree (67%)",
    );
    const rejected = [reviewer("reject"), reviewer("reject")];
    expect(
      consensusSummary(review({ reviewers: rejected, verdict: "reject", counted: 2, agreement: 1 })),
    ).toBe("REJECT — 2 of 2 agree (100%)");
  });

  test("a tie is split; reviewers whose answer was not read are named apart", () => {
    const reviewers = [reviewer("approve"), reviewer("reject"), reviewer(null, "unparsable")];
    expect(consensusSummary(review({ reviewers, verdict: "split", counted: 2, agreement: 0.5 }))).toBe(
      "SPLIT — 1 approve, 1 reject; 1 not counted",
    );
  });

  test("running: how many reviewers have finished; failed: why", () => {
    const reviewers = [reviewer(null, "reviewing"), reviewer("approve"), reviewer(null, "timed_out")];
    expect(consensusSummary(review({ status: "running", verdict: null, agreement: null, reviewers }))).toBe(
      "RUNNING — 2 of 3 reviewers finished",
    );
    expect(
      consensusSummary(
        review({
          status: "failed",
          verdict: null,
          agreement: null,
          error: "no reviewer's answer could be read",
        }),
      ),
    ).toBe("FAILED — no reviewer's answer could be read");
  });

  test("shares are whole percents", () => {
    expect([percent(0.6667), percent(0.5), percent(1), percent(0.3333)]).toEqual([
      "67%",
      "50%",
      "100%",
      "33%",
    ]);
  });
});
