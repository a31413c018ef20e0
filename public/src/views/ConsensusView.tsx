import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { REVIEWER_ENDS } from "../../../src/consensus/limits.ts";
import { api, describe } from "../api.ts";
import { coalesced } from "../coalesce.ts";
import {
  consensusSummary,
  formatCost,
  formatDuration,
  formatTokens,
  percent,
  REVIEWER_WORDS,
  totalTokens,
} from "../format.ts";
import { sessionHref } from "../router.ts";
import { onEvent, onResync, sessions } from "../store.ts";
import type { Consensus, ReviewedChange, Reviewer } from "../types.ts";

/** A reviewer's session publishes a burst of events per step: one read of the record for them. */
const COALESCE_MS = 200;

const CHANGE_WORDS: Record<ReviewedChange["kind"], string> = {
  git: "git diff of the work tree against the commit the session started from",
  files: "the files the session wrote (not a git repository), as they are now",
  none: "none: the session's transcript records no file written",
};

/**
 * One consensus review (a notification's link lands here): the verdict and agreement, each
 * criterion's verdict, each reviewer's assessment and the change they were given. While the
 * review runs the page follows it: `consensus.completed` ends it, and the reviewers' own
 * sessions' events (reviewer progress has no event of its own) read the record again.
 */
export function ConsensusView({ id }: { id: string }) {
  const record = useSignal<Consensus | null>(null);
  const error = useSignal<string | null>(null);

  useEffect(() => {
    record.value = null;
    error.value = null;
    const path = `/v1/consensus/${encodeURIComponent(id)}`;
    // Reads may overlap (an event during a read): only the newest one asked for is shown.
    let asked = 0;
    let open = true;
    async function load() {
      const mine = ++asked;
      try {
        const answer = await api<Consensus>(path);
        if (!open || mine !== asked) return;
        record.value = answer;
        error.value = null;
      } catch (e) {
        if (open && mine === asked) error.value = describe(e);
      }
    }
    const reload = coalesced(() => void load(), COALESCE_MS);
    void load();
    const offEvent = onEvent((event) => {
      if (event.event === "consensus.completed") {
        if (event.meta.consensusId === id) void load();
        return;
      }
      const shown = record.peek();
      if (shown?.status !== "running" || !event.event.startsWith("session.") || !event.session) return;
      const from = event.session.id;
      // A reviewer whose session is being opened has no id in the record yet: a new session may be it.
      const opening = shown.reviewers.some((r) => r.sessionId === null && !REVIEWER_ENDS.includes(r.status));
      if (opening || shown.reviewers.some((r) => r.sessionId === from)) reload.schedule();
    });
    const offResync = onResync(() => void load());
    return () => {
      open = false;
      offEvent();
      offResync();
      reload.cancel();
    };
  }, [id]);

  const c = record.value;
  if (!c)
    return error.value ? (
      <section>
        <p class="error" role="alert" id="consensus-error">
          {error.value}
        </p>
        <a href="#/">Back to the sessions</a>
      </section>
    ) : (
      <p class="muted">Loading…</p>
    );
  const target = sessions.value.find((s) => s.id === c.sessionId);
  return (
    <article class="consensus-view" data-id={c.id} data-status={c.status}>
      <header class="session-head">
        <h2>
          Review of <a href={sessionHref(c.sessionId)}>{target?.name ?? c.sessionId.slice(0, 8)}</a>
        </h2>
        <span class="state" data-state={c.status}>
          {c.status}
        </span>
      </header>
      <p
        id="verdict"
        class="verdict"
        data-verdict={c.status === "completed" ? c.verdict : c.status}
        role="status"
      >
        {consensusSummary(c)}
      </p>
      {/* A failed review's outcome line says why already. */}
      {c.error && c.status !== "failed" && <p class="error">{c.error}</p>}
      {error.value && (
        <p class="error" role="alert">
          Could not read the review again: {error.value}
        </p>
      )}
      <Criteria review={c} />
      <section aria-labelledby="reviewers-title">
        <h3 id="reviewers-title">Reviewers</h3>
        <ol class="reviewers">
          {c.reviewers.map((r) => (
            <ReviewerCard key={r.index} reviewer={r} />
          ))}
        </ol>
      </section>
      <Change change={c.change} />
      <section aria-labelledby="about-title">
        <h3 id="about-title">About this review</h3>
        <dl class="facts review-facts">
          <dt>Asked by</dt>
          <dd>{c.requestedBy}</dd>
          <dt>Started</dt>
          <dd>{new Date(c.createdAt).toLocaleString()}</dd>
          <dt>Finished</dt>
          <dd>
            {c.finishedAt
              ? `${new Date(c.finishedAt).toLocaleString()} (took ${formatDuration(Date.parse(c.finishedAt) - Date.parse(c.createdAt))})`
              : "–"}
          </dd>
          <dt>Tokens</dt>
          <dd title={`${c.tokens.input} in, ${c.tokens.output} out`}>
            {formatTokens(totalTokens(c.tokens))}
          </dd>
          <dt>Cost</dt>
          <dd title="an estimate from the price table">{formatCost(c.costUsd)}</dd>
          <dt>Review id</dt>
          <dd>
            <code>{c.id}</code>
          </dd>
        </dl>
      </section>
    </article>
  );
}

/** Each criterion's verdict; while the review runs, the criteria alone. */
function Criteria({ review }: { review: Consensus }) {
  const verdicts = new Map(review.criteriaVerdicts.map((v) => [v.criterion, v]));
  return (
    <section aria-labelledby="criteria-title">
      <h3 id="criteria-title">Criteria</h3>
      <table id="criteria" class="criteria">
        <thead>
          <tr>
            <th scope="col">Criterion</th>
            <th scope="col" class="count">
              Pass
            </th>
            <th scope="col" class="count">
              Fail
            </th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {review.criteria.map((criterion, n) => {
            const v = verdicts.get(criterion);
            return (
              <tr key={n} data-verdict={v?.verdict ?? "pending"}>
                <td class="criterion">{criterion}</td>
                <td class="count">{v ? v.pass : "–"}</td>
                <td class="count">{v ? v.fail : "–"}</td>
                <td class="criterion-verdict">
                  {v ? (
                    <span
                      class="mark"
                      data-verdict={v.verdict}
                      title="share of the counted reviewers on the majority side"
                    >
                      {v.verdict.toUpperCase()} {percent(v.agreement)}
                    </span>
                  ) : (
                    <span class="muted">{review.status === "running" ? "waiting" : "–"}</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

function ReviewerCard({ reviewer: r }: { reviewer: Reviewer }) {
  const took =
    r.startedAt && r.finishedAt ? formatDuration(Date.parse(r.finishedAt) - Date.parse(r.startedAt)) : null;
  return (
    <li class="reviewer" data-index={r.index} data-status={r.status}>
      <div class="reviewer-head">
        <strong>Reviewer {r.index}</strong>
        <span class="state" data-state={r.status}>
          {REVIEWER_WORDS[r.status]}
        </span>
        {r.verdict && (
          <span class="mark" data-verdict={r.verdict}>
            {r.verdict.toUpperCase()}
          </span>
        )}
        {r.restated && (
          <span class="restated" title="Its first answer could not be read: it was asked once to restate it">
            restated
          </span>
        )}
        {r.sessionId && (
          <a class="reviewer-session" href={sessionHref(r.sessionId)}>
            its session
          </a>
        )}
      </div>
      {r.criteria.length > 0 && (
        <ul class="assessments">
          {r.criteria.map((a, n) => (
            <li key={n} data-pass={String(a.pass)}>
              <span class="mark" data-verdict={a.pass ? "pass" : "fail"}>
                {a.pass ? "PASS" : "FAIL"}
              </span>{" "}
              <span class="criterion">{a.criterion}</span>
              {a.note && <span class="note">{a.note}</span>}
            </li>
          ))}
        </ul>
      )}
      {r.error && <p class="error reviewer-error">{r.error}</p>}
      {r.answer && (
        <details class="answer">
          <summary class="answer-toggle">Its answer as written</summary>
          <pre>{r.answer}</pre>
        </details>
      )}
      <p class="reviewer-facts muted">
        {r.agent} · {formatTokens(totalTokens(r.tokens))} tokens · {formatCost(r.costUsd)}
        {took && ` · ${took}`}
      </p>
    </li>
  );
}

function Change({ change }: { change: ReviewedChange | null }) {
  return (
    <section aria-labelledby="change-title" class="change">
      <h3 id="change-title">The change reviewed</h3>
      {!change ? (
        <p class="muted">Not recorded.</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Kind</dt>
            <dd data-kind={change.kind}>{CHANGE_WORDS[change.kind]}</dd>
            {change.base && (
              <>
                <dt>Base</dt>
                <dd>
                  <code title={change.base}>{change.base.slice(0, 12)}</code>
                </dd>
              </>
            )}
            <dt>Size</dt>
            <dd>
              {change.bytes} bytes as given to the reviewers
              {change.truncated && <strong class="truncated"> — cut to fit the brief</strong>}
            </dd>
          </dl>
          {change.files.length > 0 && (
            <ul class="files">
              {change.files.map((f) => (
                <li key={f}>
                  <code>{f}</code>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
