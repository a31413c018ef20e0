import { describe, expect, test } from "bun:test";
import { repeatedFlag } from "../../src/cli/args.ts";
import { changeSummary } from "../../src/cli/review-view.ts";
import { ag, insert, serve, spawnAg } from "../helpers/cli.ts";
import { answer } from "../helpers/consensus.ts";
import { collect } from "../helpers/stream.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: records are inspected field by field
type Json = Record<string, any>;

/**
 * `ag review` as a person (or a CI job) runs it, against the real app and the real consensus
 * service over HTTP; only the reviewers are scripted (tests/helpers/consensus.ts). The session is
 * named by its name, as everywhere else.
 */

const CRITERIA = ["-c", "the tests pass", "--criterion", "the docs say how"];

function reviewing() {
  const server = serve({ reviews: true });
  const session = insert(server.ag, { name: "builder", status: "idle", workDir: tempDir() });
  return { ...server, reviews: server.reviews!, session };
}

describe("ag review waits for the verdict", () => {
  test("approve: exit 0; the outcome, the criteria and a line per reviewer, after the event", async () => {
    const { port, reviews } = reviewing();
    reviews.script(
      [
        [answer("APPROVE", ["PASS", "PASS"])],
        [answer("APPROVE", ["PASS", "PASS"])],
        [answer("REJECT", ["PASS", "FAIL"], "no usage section")],
      ],
      { hold: true },
    );
    const proc = spawnAg(["review", "builder", ...CRITERIA, "--port", port]);
    const out = collect(proc.stdout);
    const err = collect(proc.stderr);
    await err.until("waiting for the verdict of 3 reviewers");
    await until(() => reviews.sent.length === 3);
    // Still waiting: the reviewers have not answered.
    await Bun.sleep(300);
    expect(proc.exitCode).toBeNull();
    reviews.release();
    expect(await proc.exited).toBe(0);
    await out.done;
    const lines = out.text().split("\n");
    expect(lines[0]).toBe("approve: 2 of 3 reviewers agree · agreement 67%");
    expect(err.text()).toMatch(/^review [0-9a-f-]{36} of builder: 3 reviewers, 2 criteria$/m);
    expect(out.text()).toMatch(/^ {2}session\s+builder \([0-9a-f]{8}\)$/m);
    expect(out.text()).toMatch(/^ {2}reviewers\s+3, 3 counted · \$0\.03$/m);
    expect(out.text()).toMatch(/^1\s+pass\s+3\s+0\s+100%\s+the tests pass$/m);
    expect(out.text()).toMatch(/^2\s+pass\s+2\s+1\s+67%\s+the docs say how$/m);
    expect(out.text()).toMatch(/^3\s+done\s+reject\s+\$0\.01\s+FAIL 2: no usage section 2$/m);
    expect(lines.filter((l) => /^\d\s+done\s+approve/.test(l))).toHaveLength(2);
    // Every reviewer was given both criteria.
    for (const brief of reviews.sent) expect(brief).toContain("the docs say how");
  });

  test("reject, split and failed exit 1 after printing, with the outcome on stderr", async () => {
    const { port, reviews } = reviewing();
    reviews.script([
      [answer("REJECT", ["FAIL"])],
      [answer("REJECT", ["FAIL"])],
      [answer("APPROVE", ["PASS"])],
    ]);
    const rejected = await ag(["review", "builder", "-c", "x", "--port", port]);
    expect(rejected.exitCode).toBe(1);
    expect(rejected.stdout).toStartWith("reject: 2 of 3 reviewers agree · agreement 67%\n");
    expect(rejected.stderr).toContain(
      "ag: not approved: reject: 2 of 3 reviewers agree [CONSENSUS_NOT_APPROVED]",
    );

    reviews.script([[answer("REJECT", ["FAIL"])], [answer("APPROVE", ["PASS"])]]);
    const split = await ag(["review", "builder", "-c", "x", "--reviewers", "2", "--port", port]);
    expect(split.exitCode).toBe(1);
    expect(split.stdout).toStartWith("split: 1 approve, 1 reject · agreement 50%\n");

    reviews.script([["I like it.", "As I said, I like it."]]);
    const failed = await ag(["review", "builder", "-c", "x", "--reviewers", "1", "--port", port]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toStartWith("review failed: no reviewer's answer could be read\n");
    expect(failed.stdout).toMatch(
      /^1\s+unparsable \(restated\)\s+-\s+\$0\.01\s+no PASS or FAIL for CRITERION 1$/m,
    );
    expect(failed.stderr).toContain("[CONSENSUS_NOT_APPROVED]");
  });

  test("--json prints the finished review as the API has it", async () => {
    const { port, reviews, session } = reviewing();
    reviews.script([[answer("APPROVE", ["PASS", "PASS"])]]);
    const json = await ag([
      "review",
      session.id.slice(0, 8),
      ...CRITERIA,
      "--reviewers",
      "1",
      "--json",
      "--port",
      port,
    ]);
    expect(json.exitCode).toBe(0);
    const record = JSON.parse(json.stdout) as Json;
    expect(record).toMatchObject({
      sessionId: session.id,
      status: "completed",
      verdict: "approve",
      agreement: 1,
      criteria: ["the tests pass", "the docs say how"],
    });
  });
});

describe("ag review --no-wait and --show", () => {
  test("--no-wait prints the id; --show prints it running (exit 1), --show --wait its verdict", async () => {
    const { port, reviews } = reviewing();
    reviews.script([[answer("APPROVE", ["PASS"])], [answer("APPROVE", ["PASS"])]], { hold: true });
    const started = await ag([
      "review",
      "builder",
      "-c",
      "x",
      "--reviewers",
      "2",
      "--no-wait",
      "--port",
      port,
    ]);
    expect(started.exitCode).toBe(0);
    const id = /^started review ([0-9a-f-]{36}) of builder: 2 reviewers, 1 criterion$/m.exec(
      started.stdout,
    )![1]!;
    expect(started.stderr).toContain(`look at it: ag review --show ${id.slice(0, 8)}`);
    expect(started.stderr).toContain(`/dashboard/#/consensus/${id}`);
    await until(() => reviews.sent.length === 2);

    const running = await ag(["review", "--show", id.slice(0, 8), "--port", port]);
    expect(running.exitCode).toBe(1);
    expect(running.stdout).toStartWith("running: 0 reviewers of 2 finished\n");
    expect(running.stdout).toMatch(/^1\s+-\s+-\s+-\s+-\s+x$/m);
    expect(running.stdout).toMatch(/^2\s+reviewing\s+-\s+-$/m);
    expect(running.stderr).toContain(
      `no verdict yet (ag review --show ${id.slice(0, 8)} --wait waits for it)`,
    );

    const proc = spawnAg(["review", "--show", id, "--wait", "--json", "--port", port]);
    const out = collect(proc.stdout);
    await collect(proc.stderr).until("waiting for its verdict");
    reviews.release();
    expect(await proc.exited).toBe(0);
    await out.done;
    expect(JSON.parse(out.text())).toMatchObject({ id, status: "completed", verdict: "approve" });

    const shown = await ag(["review", "--show", id, "--port", port]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toStartWith("approve: 2 of 2 reviewers agree · agreement 100%\n");
  });

  test("mistakes: no session, no criterion, too many reviewers, an unknown session or review", async () => {
    const { port } = reviewing();
    const cases: Array<[string[], string]> = [
      [["-c", "x"], "name the session to review"],
      [["builder"], "give at least one criterion"],
      [["builder", "-c", "x", "--reviewers", "8"], "--reviewers expects a whole number from 1 to 7"],
      [["builder", "-c", ""], "a criterion is empty"],
      [["--show", "abc", "-c", "x"], "--show prints a review: it takes no session"],
      [["nobody", "-c", "x"], "[SESSION_NOT_FOUND]"],
      [["--show", "abcdef"], "no review abcdef (not an id or the start of one) [CONSENSUS_NOT_FOUND]"],
      [["--show", crypto.randomUUID()], "[CONSENSUS_NOT_FOUND]"],
    ];
    // Eight processes that change nothing: side by side (each is ~0.6 s of start-up).
    const results = await Promise.all(cases.map(([args]) => ag(["review", ...args, "--port", port])));
    for (const [i, [args, message]] of cases.entries()) {
      expect(`${args.join(" ")}: ${results[i]!.exitCode}`).toBe(`${args.join(" ")}: 1`);
      expect(results[i]!.stderr).toContain(message);
    }
  });
});

describe("a flag given more than once", () => {
  test("every value, in order, in each spelling; none after --", () => {
    expect(
      repeatedFlag(
        ["s", "-c", "a", "--criterion", "b", "--criterion=c=d", "--", "-c", "e"],
        ["-c", "--criterion"],
      ),
    ).toEqual(["a", "b", "c=d"]);
    expect(repeatedFlag(["-c"], ["-c"])).toEqual([]);
  });
});

describe("what the reviewers were given, in a phrase", () => {
  test("a git diff against the start commit, the files written, or nothing", () => {
    const base = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d";
    expect(changeSummary({ kind: "git", base, files: ["a.ts", "b.ts"], bytes: 10, truncated: false })).toBe(
      "git diff against 1a2b3c4d5e6f: 2 files",
    );
    expect(changeSummary({ kind: "files", base: null, files: ["a.ts"], bytes: 10, truncated: true })).toBe(
      "1 file the session wrote, cut to fit the brief",
    );
    expect(changeSummary({ kind: "none", base: null, files: [], bytes: 0, truncated: false })).toBe(
      "none found: no diff, no file the session wrote",
    );
  });
});
