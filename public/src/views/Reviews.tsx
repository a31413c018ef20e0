import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import {
  DEFAULT_REVIEWERS,
  MAX_CRITERIA,
  MAX_REVIEWERS,
  MIN_REVIEWERS,
} from "../../../src/consensus/limits.ts";
import { api, describe } from "../api.ts";
import { age, consensusSummary } from "../format.ts";
import { consensusHref, go } from "../router.ts";
import { onEvent, onResync } from "../store.ts";
import type { Consensus } from "../types.ts";

/**
 * A session's consensus reviews (newest first), each linked to its page, and a form to ask for
 * one: the criteria one per line, how many reviewers. The list is read again when one of its
 * reviews ends (`consensus.completed`); a review started here opens its own page.
 */
export function Reviews({ sessionId }: { sessionId: string }) {
  const reviews = useSignal<Consensus[] | null>(null);
  const error = useSignal<string | null>(null);

  useEffect(() => {
    reviews.value = null;
    error.value = null;
    const path = `/v1/consensus?sessionId=${encodeURIComponent(sessionId)}`;
    let asked = 0;
    let open = true;
    async function load() {
      const mine = ++asked;
      try {
        const answer = await api<Consensus[]>(path);
        if (!open || mine !== asked) return;
        reviews.value = answer;
        error.value = null;
      } catch (e) {
        if (open && mine === asked) error.value = describe(e);
      }
    }
    void load();
    const offEvent = onEvent((event) => {
      if (event.event === "consensus.completed" && event.meta.sessionId === sessionId) void load();
    });
    const offResync = onResync(() => void load());
    return () => {
      open = false;
      offEvent();
      offResync();
    };
  }, [sessionId]);

  const list = reviews.value;
  return (
    <section class="reviews" aria-labelledby="reviews-title">
      <h3 id="reviews-title">Reviews</h3>
      {error.value && (
        <p class="error" role="alert">
          {error.value}
        </p>
      )}
      {list && list.length === 0 && <p class="muted">No consensus review of this session yet.</p>}
      {list && list.length > 0 && (
        <ul id="reviews">
          {list.map((c) => (
            <li key={c.id} data-id={c.id} data-status={c.status}>
              {/* The list is read when a review ends, not as its reviewers progress. */}
              <a href={consensusHref(c.id)}>
                {c.status === "running" ? `RUNNING — ${c.reviewers.length} reviewers` : consensusSummary(c)}
              </a>{" "}
              <span class="muted">
                {c.criteria.length} {c.criteria.length === 1 ? "criterion" : "criteria"} ·{" "}
                <span title={new Date(c.createdAt).toLocaleString()}>{age(c.createdAt)} ago</span>
              </span>
            </li>
          ))}
        </ul>
      )}
      <ReviewForm sessionId={sessionId} />
    </section>
  );
}

function ReviewForm({ sessionId }: { sessionId: string }) {
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);

  async function submit(form: HTMLFormElement) {
    const data = new FormData(form);
    const criteria = String(data.get("criteria") ?? "")
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean);
    const reviewers = Number(data.get("reviewers") || DEFAULT_REVIEWERS);
    busy.value = true;
    error.value = null;
    try {
      const started = await api<Consensus>(`/v1/sessions/${encodeURIComponent(sessionId)}/consensus`, {
        method: "POST",
        body: { criteria, reviewers },
      });
      go(consensusHref(started.id));
    } catch (e) {
      error.value = describe(e);
    } finally {
      busy.value = false;
    }
  }

  return (
    <details class="review-form">
      <summary class="review-toggle">Ask for a consensus review</summary>
      <form
        id="new-review"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(e.currentTarget);
        }}
      >
        <p class="muted">
          Independent read-only reviewers judge this session's work, each criterion PASS or FAIL, then approve
          or reject it; the majority decides.
        </p>
        <label>
          Criteria, one per line (at most {MAX_CRITERIA})
          <textarea
            name="criteria"
            rows={3}
            required
            placeholder={"e.g. The tests pass\nNothing unrelated changed"}
          />
        </label>
        <div class="review-form-row">
          <label>
            Reviewers{" "}
            <input
              name="reviewers"
              type="number"
              inputMode="numeric"
              min={MIN_REVIEWERS}
              max={MAX_REVIEWERS}
              defaultValue={String(DEFAULT_REVIEWERS)}
              required
            />
          </label>
          <button type="submit" disabled={busy.value}>
            {busy.value ? "Starting…" : "Start the review"}
          </button>
        </div>
        {error.value && (
          <p class="error" role="alert" id="review-error">
            {error.value}
          </p>
        )}
      </form>
    </details>
  );
}
