import { defineCommand } from "citty";
import { type Consensus, MAX_CRITERIA, MAX_REVIEWERS } from "../../consensus/consensus.ts";
import { describeOutcome } from "../../consensus/describe.ts";
import type { Session } from "../../sessions/index.ts";
import { consensusUrl } from "../../shared/dashboard-links.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, parseCountFlag, repeatedFlag } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect, dashboardUrl } from "../connect.ts";
import { colourEnabled, plural, printJson, printLine, printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { consensusPath, resolveReview, waitForReview } from "../review.ts";
import { reviewHandle, reviewLines } from "../review-view.ts";

/** Starting a review gathers the session's change (a git diff) and its last answer first. */
const START_TIMEOUT_MS = 60_000;

/**
 * `ag review <session> -c "…" [-c "…"]…`: a consensus review of the session's work
 * (POST /v1/sessions/:id/consensus). By default it waits for the verdict on the server's event
 * stream and prints it; the exit code is 0 only for approve, so a CI job can gate on it.
 * `--no-wait` prints the review's id; `--show <review>` prints a review (at once, or its verdict
 * with `--wait`).
 */
export default defineCommand({
  meta: {
    name: "review",
    description:
      "Independent read-only reviewers judge a session's work against criteria; waits for the verdict (exit 0 only on approve)",
  },
  args: {
    ...GLOBAL_ARGS,
    session: {
      type: "positional",
      required: false,
      description: "The session whose work is reviewed: its id, a unique start of the id, or its name",
      valueHint: "session",
    },
    criterion: {
      type: "string",
      alias: ["c"],
      description: `A criterion each reviewer judges PASS or FAIL; repeat it (1–${MAX_CRITERIA})`,
      valueHint: "text",
    },
    reviewers: {
      type: "string",
      description: `How many independent reviewers, 1–${MAX_REVIEWERS} (default: the server's, 3)`,
      valueHint: "n",
    },
    wait: {
      type: "boolean",
      description:
        "Wait for the verdict: the default when starting a review (--no-wait prints its id and returns); --show prints at once unless --wait",
    },
    show: {
      type: "string",
      description: "Print this review (its id or a unique start of it) instead of starting one",
      valueHint: "review",
    },
    json: { type: "boolean", description: "Machine-readable output: the review as the API answers it" },
  },
  async run({ args, rawArgs }) {
    const { client, loaded } = connect(args, { timeoutMs: () => START_TIMEOUT_MS });
    const criteria = repeatedFlag(rawArgs, ["-c", "--criterion"]);
    if (args.show !== undefined) {
      if (args.session !== undefined || criteria.length > 0 || args.reviewers !== undefined)
        throw new AgError("USAGE_ERROR", "--show prints a review: it takes no session, -c or --reviewers");
      const id = await resolveReview(client, args.show);
      const review =
        args.wait === true
          ? await waitForReview(client, id, "waiting for its verdict")
          : await client.get<Consensus>(consensusPath(id));
      return finish(client, review, args.json === true);
    }

    if (args.session === undefined)
      throw new AgError("USAGE_ERROR", 'name the session to review: ag review <session> -c "criterion"');
    if (criteria.length === 0)
      throw new AgError(
        "USAGE_ERROR",
        'give at least one criterion: -c "the tests pass" (repeat -c for more)',
      );
    if (criteria.length > MAX_CRITERIA)
      throw new AgError("USAGE_ERROR", `at most ${MAX_CRITERIA} criteria, got ${criteria.length}`);
    if (criteria.some((c) => c.trim() === "")) throw new AgError("USAGE_ERROR", "a criterion is empty");
    const reviewers =
      args.reviewers === undefined
        ? undefined
        : parseCountFlag("--reviewers", args.reviewers, 0, MAX_REVIEWERS);

    const session = await resolveSession(client, args.session);
    const started = await client.send<Consensus>("POST", sessionPath(session.id, "consensus"), {
      criteria,
      ...(reviewers === undefined ? {} : { reviewers }),
    });
    const handle = reviewHandle(started);
    const what = `review ${started.id} of ${session.name}: ${plural(started.reviewers.length, "reviewer")}, ${plural(criteria.length, "criterion", "criteria")}`;
    const page = `dashboard: ${consensusUrl(dashboardUrl(loaded, client.baseUrl), started.id)}`;
    if (args.wait === false) {
      if (args.json) printJson(started);
      else printLine(`started ${what}`);
      printNote(`look at it: ag review --show ${handle} (--wait waits for the verdict) or ${page}`);
      return;
    }
    printNote(what);
    printNote(page);
    const review = await waitForReview(
      client,
      started.id,
      `waiting for the verdict of ${plural(started.reviewers.length, "reviewer")}`,
    );
    return finish(client, review, args.json === true, session);
  },
});

/** Prints the review; anything but approve then ends the command with exit 1. */
async function finish(client: ApiClient, review: Consensus, json: boolean, session?: Session) {
  if (json) printJson(review);
  else {
    const name =
      session?.name ??
      (await client
        .get<Session>(sessionPath(review.sessionId))
        .then((s) => s.name)
        .catch(() => undefined));
    for (const line of reviewLines(review, { colour: colourEnabled(), sessionName: name })) printLine(line);
  }
  if (review.status === "completed" && review.verdict === "approve") return;
  const outcome =
    review.status === "running"
      ? `review ${reviewHandle(review)} has no verdict yet (ag review --show ${reviewHandle(review)} --wait waits for it)`
      : describeOutcome(review);
  throw new AgError("CONSENSUS_NOT_APPROVED", `not approved: ${outcome}`);
}
