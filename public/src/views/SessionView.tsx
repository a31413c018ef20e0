import { useSignal } from "@preact/signals";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { REVIEWER_OF } from "../../../src/consensus/limits.ts";
import { DRIVER_TRAITS } from "../../../src/drivers/traits.ts";
import { TERMINAL_STATES } from "../../../src/events/names.ts";
import { api, describe } from "../api.ts";
import { coalesced } from "../coalesce.ts";
import { age, agentMode, formatCost, formatTokens, STATE_WORDS, totalTokens } from "../format.ts";
import { nextStep } from "../next-step.ts";
import { consensusHref, go, sessionHref } from "../router.ts";
import { CHANGES_USAGE, onEvent, onResync } from "../store.ts";
import type { Session, SessionUsage } from "../types.ts";
import { BudgetCard } from "./BudgetCard.tsx";
import { Checkpoints } from "./Checkpoints.tsx";
import { PendingCard } from "./PendingCard.tsx";
import { Reviews } from "./Reviews.tsx";
import { SendBox } from "./SendBox.tsx";
import { Terminal } from "./Terminal.tsx";
import { Transcript } from "./Transcript.tsx";
import { createTranscriptFeed } from "./transcript-feed.ts";

const COALESCE_MS = 200;
/** A turn writes many messages: their tokens are read once per this much. */
const USAGE_COALESCE_MS = 1000;
const ENDED = new Set<string>(TERMINAL_STATES);

/** One session: its pending card first, then the live terminal, the transcript and the controls. */
export function SessionView({ id, at }: { id: string; at?: number }) {
  const session = useSignal<Session | null>(null);
  const error = useSignal<string | null>(null);
  const usage = useSignal<SessionUsage | null>(null);
  const feed = useMemo(() => createTranscriptFeed(id), [id]);
  const path = `/v1/sessions/${encodeURIComponent(id)}`;
  // Which session the view shows now: an answer for another (a load begun before a Fork moved
  // the view on) is dropped.
  const shown = useRef(id);
  shown.current = id;

  async function load() {
    const wanted = id;
    try {
      const answer = await api<Session>(path);
      if (shown.current !== wanted) return;
      session.value = answer;
      error.value = null;
    } catch (e) {
      if (shown.current === wanted) error.value = describe(e);
      return;
    }
    await loadUsage();
  }

  /** Tokens and cost from one reading of the transcript (the session's metrics), never one without the other. */
  async function loadUsage() {
    const wanted = id;
    try {
      const metrics = await api<{ tokens: SessionUsage["tokens"]; estimatedCost: { usd: number } }>(
        `${path}/metrics`,
      );
      if (shown.current === wanted) usage.value = { tokens: metrics.tokens, usd: metrics.estimatedCost.usd };
    } catch {
      // The figures are extra: the page stands without them.
    }
  }

  useEffect(() => {
    session.value = null;
    usage.value = null;
    void load();
    void feed.newer();
    const reload = coalesced(() => void load(), COALESCE_MS);
    const reloadUsage = coalesced(() => void loadUsage(), USAGE_COALESCE_MS);
    const offEvent = onEvent((event) => {
      if (event.session?.id !== id) return;
      if (event.event.startsWith("message.")) void feed.newer();
      else reload.schedule();
      if (CHANGES_USAGE.test(event.event)) reloadUsage.schedule();
      // A permission's tool call is in the transcript: read it with the prompt.
      if (event.event === "permission.requested") void feed.newer();
    });
    const offResync = onResync(() => {
      void load();
      void feed.newer();
    });
    return () => {
      offEvent();
      offResync();
      reload.cancel();
      reloadUsage.cancel();
    };
  }, [id]);

  const s = session.value;
  if (error.value && !s)
    return (
      <section>
        <p class="error" role="alert">
          {error.value}
        </p>
        <a href="#/">Back to the sessions</a>
      </section>
    );
  if (!s) return <p class="muted">Loading…</p>;
  const ended = ENDED.has(s.status);
  const tokens = usage.value?.tokens ?? s.tokenUsage;
  // A reviewer's own session links to its review, and is not itself reviewed.
  const reviewOf = s.managedBy?.startsWith(REVIEWER_OF) ? s.managedBy.slice(REVIEWER_OF.length) : null;
  return (
    <article class="session-view" data-id={s.id} data-state={s.status}>
      <header class="session-head">
        <h2>{s.name}</h2>
        <span class="state" data-state={s.status}>
          {STATE_WORDS[s.status]}
        </span>
      </header>
      {/* What waits for a person comes first: a link from a notification lands on it. */}
      {/* Keyed by the prompt: what one card said (a notice, a typed answer) is not the next one's. */}
      {s.pendingPermission && (
        <PendingCard key={s.pendingPermission.id} session={s} messages={feed.messages.value} onDone={load} />
      )}
      {s.budget && (s.budget.usd !== null || s.budget.tokens !== null || s.budget.state === "reached") && (
        <BudgetCard session={s} onDone={load} />
      )}
      <section class="session-facts" aria-label="About this session">
        <dl class="facts">
          <dt>Work dir</dt>
          <dd>{s.workDir}</dd>
          <dt>Agent · mode</dt>
          <dd>{agentMode(s)}</dd>
          <dt>Tokens</dt>
          <dd class="tokens" title={`${tokens.input} in, ${tokens.output} out`}>
            {formatTokens(totalTokens(tokens))}
          </dd>
          <dt>Cost</dt>
          <dd class="cost">{formatCost(usage.value?.usd)}</dd>
          <dt>Age</dt>
          <dd>{age(s.createdAt)}</dd>
          {reviewOf && (
            <>
              <dt>Reviewer in</dt>
              <dd>
                <a href={consensusHref(reviewOf)}>a consensus review</a>
              </dd>
            </>
          )}
          {s.handedOffFrom && (
            <>
              <dt>Taken over from</dt>
              <dd>
                <a href={sessionHref(s.handedOffFrom)}>{s.handedOffFrom.slice(0, 8)}</a>
              </dd>
            </>
          )}
          {s.handedOffTo && (
            <>
              <dt>Handed off to</dt>
              <dd>
                <a href={sessionHref(s.handedOffTo)}>{s.handedOffTo.slice(0, 8)}</a>
              </dd>
            </>
          )}
          {s.parentId && (
            <>
              <dt>Parent</dt>
              <dd>
                <a href={sessionHref(s.parentId)}>{s.parentId.slice(0, 8)}</a>
              </dd>
            </>
          )}
        </dl>
        {/* What to do next, with this page's controls; the card above already answers a prompt. */}
        {!s.pendingPermission && (
          <p class="next-step" id="next-step">
            {nextStep(s)}
          </p>
        )}
      </section>
      {!ended && <SendBox sessionId={s.id} asking={s.status === "asking"} />}
      <Actions session={s} reload={load} />
      {!reviewOf && <Reviews sessionId={s.id} />}
      {/* A headless session has no terminal to show: its transcript is all there is. */}
      <div class={DRIVER_TRAITS[s.driver].terminal ? "panes" : "panes single"}>
        {!ended && DRIVER_TRAITS[s.driver].terminal && <Terminal sessionId={s.id} />}
        <Transcript feed={feed} at={at} />
      </div>
      <Checkpoints sessionId={s.id} working={!ended && s.status !== "idle"} />
    </article>
  );
}

function Actions({ session, reload }: { session: Session; reload(): Promise<void> }) {
  const busy = useSignal<string | null>(null);
  const result = useSignal<{ ok: boolean; text: string } | null>(null);
  const path = `/v1/sessions/${encodeURIComponent(session.id)}`;
  const ended = ENDED.has(session.status);
  const { terminal, continues } = DRIVER_TRAITS[session.driver];

  async function run(label: string, method: string, route: string, after?: (body: unknown) => string | void) {
    busy.value = label;
    result.value = null;
    try {
      const body = await api<unknown>(`${path}${route}`, { method });
      const said = after?.(body);
      result.value = { ok: true, text: said ?? `${label}: done` };
    } catch (e) {
      result.value = { ok: false, text: `${label}: ${describe(e)}` };
    } finally {
      busy.value = null;
      void reload();
    }
  }

  /** A new session of another agent takes the task over; the view follows it. */
  async function handOff(agent: string) {
    busy.value = "Hand off";
    result.value = null;
    try {
      const body = await api<{ to: Session }>(`${path}/handoff`, { method: "POST", body: { agent } });
      go(sessionHref(body.to.id));
    } catch (e) {
      result.value = { ok: false, text: `Hand off: ${describe(e)}` };
    } finally {
      busy.value = null;
      void reload();
    }
  }

  const button = (label: string, onClick: () => void, cls?: string) => (
    <button type="button" class={cls} disabled={busy.value !== null} onClick={onClick}>
      {busy.value === label ? `${label}…` : label}
    </button>
  );
  return (
    <div class="actions" role="toolbar" aria-label="Session actions">
      {!ended && button("Interrupt", () => run("Interrupt", "POST", "/interrupt"))}
      {!ended && terminal && button("Escape", () => run("Escape", "POST", "/escape"))}
      {!ended &&
        button("Verify", () =>
          run("Verify", "POST", "/verify", (b) => {
            return (b as { summary: string }).summary;
          }),
        )}
      {continues &&
        button("Fork", () =>
          run("Fork", "POST", "/fork", (b) => {
            go(sessionHref((b as Session).id));
          }),
        )}
      {ended && continues && button("Resume", () => run("Resume", "POST", "/resume"))}
      {!ended &&
        button("Hand off", () => {
          const agent = prompt("Hand the task to which agent (codex, gemini, opencode, claude)?");
          if (agent?.trim()) void handOff(agent.trim());
        })}
      {!ended &&
        button(
          "Kill",
          () => {
            if (
              confirm(
                `Kill session ${session.name}? Its agent stops${terminal ? " and its window closes" : ""}.`,
              )
            )
              void run("Kill", "DELETE", "");
          },
          "danger",
        )}
      {result.value && (
        <p class={result.value.ok ? "notice" : "error"} role="status">
          {result.value.text}
        </p>
      )}
    </div>
  );
}
