import type * as acp from "@agentclientprotocol/sdk";
import type { Static } from "@sinclair/typebox";
import type { CreatedSession, PendingPermission, Session, SessionMetrics } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { Choices } from "./options.ts";
import { answerPermission, permissionRequest } from "./permissions.ts";
import type { AgApi, EventFeed, FeedEvent } from "./port.ts";
import { readAfter, toUpdates } from "./transcript.ts";

/**
 * One ACP session of `ag acp`: the ag session it drives (launched at the first prompt, or the
 * one `session/load` attached to), followed live through the server's events. An event says
 * something happened; the transcript cursor says what (every entry whole, each once, in order);
 * a change of state carries the prompt the session waits on, relayed to the editor.
 */

type Created = Static<typeof CreatedSession>;
type Metrics = Static<typeof SessionMetrics>;

export interface EditorSessionDeps {
  api: AgApi;
  feed: EventFeed;
  /** The editor: `session/update` notifications and `session/request_permission`. */
  client: Pick<acp.AgentContext, "notify" | "request">;
  /** Told of what fails outside a request (a relayed permission's answer, a read): stderr. */
  warn(message: string): void;
}

/** How a turn ended, as ag tells it (`session.turn_ended`'s reason), or the session's end. */
type TurnOutcome = "completed" | "failed" | "interrupted" | "ended";

interface Turn {
  outcome: PromiseWithResolvers<TurnOutcome>;
  /** Settles once the prompt is delivered (or failed to be): a cancel interrupts after it. */
  delivered: PromiseWithResolvers<void>;
  cancelled: boolean;
}

export interface EditorSession {
  readonly acpId: string;
  readonly cwd: string;
  agId(): string | null;
  choices(): Choices;
  setChoices(choices: Choices): void;
  /** Attaches to an existing ag session: replays its transcript, then follows it live. */
  load(session: Session): Promise<void>;
  /** `launchBody`: the create request of the ag session, for the first prompt of a new one. */
  prompt(text: string, launchBody: (text: string) => Record<string, unknown>): Promise<acp.PromptResponse>;
  cancel(): Promise<void>;
  close(): void;
}

export function createEditorSession(
  deps: EditorSessionDeps,
  init: { acpId: string; cwd: string; choices: Choices },
): EditorSession {
  const { api, feed, client } = deps;
  const { acpId, cwd } = init;
  let choices = init.choices;
  let agId: string | null = null;
  let lastId = 0;
  /** Tool calls the editor has been told of: a result of another (a plan's) is left out. */
  const toolCalls = new Set<string>();
  /** Prompts the editor sent: the transcript's copy of each is not echoed back. */
  const ownPrompts: string[] = [];
  let reading: Promise<void> = Promise.resolve();
  let turn: Turn | null = null;
  let asking: { id: string; withdraw: AbortController } | null = null;
  /** Prompts the editor has been asked about: each once, however late an event still shows it. */
  const asked = new Set<string>();
  /** Events that came while the first prompt's create ran (before the session's id was known). */
  let early: FeedEvent[] | null = null;

  const notify = (update: acp.SessionUpdate) =>
    client.notify("session/update", { sessionId: acpId, update }).catch((error) => deps.warn(String(error)));

  async function readNew(): Promise<void> {
    if (!agId) return;
    for (const message of await readAfter(api, agId, lastId)) {
      lastId = message.id;
      const own = message.kind === "prompt" && ownPrompts[0] === message.text.trim();
      if (own) ownPrompts.shift();
      for (const update of toUpdates(message, { echoUser: !own })) {
        if (update.sessionUpdate === "tool_call") toolCalls.add(update.toolCallId);
        if (update.sessionUpdate === "tool_call_update" && !toolCalls.has(update.toolCallId)) continue;
        await notify(update);
      }
    }
  }
  /** Reads what is new, after every read before it: each entry once, in order. */
  function read(): Promise<void> {
    reading = reading.then(readNew).catch((error) => deps.warn(`reading the transcript: ${error}`));
    return reading;
  }

  function relay(pending: PendingPermission | null): void {
    if (asking && asking.id !== pending?.id) {
      asking.withdraw.abort();
      asking = null;
    }
    if (!pending || asking || asked.has(pending.id) || !agId) return;
    asked.add(pending.id);
    const withdraw = new AbortController();
    asking = { id: pending.id, withdraw };
    void ask(agId, pending, withdraw.signal);
  }

  /** The editor's answer goes to ag; answered elsewhere first, the editor's request is withdrawn. */
  async function ask(id: string, pending: PendingPermission, withdrawn: AbortSignal): Promise<void> {
    try {
      const response = await client.request("session/request_permission", permissionRequest(acpId, pending), {
        cancellationSignal: withdrawn,
        stopWaitingOnCancel: true,
      });
      if (withdrawn.aborted || response.outcome.outcome !== "selected") return;
      await answerPermission(api, id, pending, response.outcome.optionId);
    } catch (error) {
      if (withdrawn.aborted) return;
      // Answered from elsewhere at the same moment: the session moved on, nothing to tell.
      if (error instanceof AgError && (error.statusCode === 404 || error.statusCode === 409)) return;
      deps.warn(`answering the permission: ${error instanceof Error ? error.message : error}`);
    } finally {
      if (asking?.id === pending.id) asking = null;
    }
  }

  function onEvent(event: FeedEvent): void {
    if (early) {
      early.push(event);
      return;
    }
    if (!agId || event.session?.id !== agId) return;
    if (event.event.startsWith("message.")) void read();
    const meta = event.meta as {
      status?: string;
      pendingPermission?: PendingPermission | null;
      reason?: string;
    };
    if (meta.status !== undefined) relay(meta.pendingPermission ?? null);
    if (event.event === "session.turn_ended") turn?.outcome.resolve(meta.reason as TurnOutcome);
    if (event.event === "session.ended") turn?.outcome.resolve("ended");
    // An interrupt that reached an agent between turns ends no turn: idle is the end then.
    if (turn?.cancelled && meta.status === "idle") turn.outcome.resolve("interrupted");
  }
  const unsubscribe = feed.subscribe(onEvent);

  async function usage(id: string): Promise<void> {
    const metrics = await api.get<Metrics>(`/v1/sessions/${id}/metrics`).catch(() => null);
    if (!metrics) return;
    const { input, output, cacheRead, cacheCreation } = metrics.tokens;
    await notify({
      sessionUpdate: "usage_update",
      used: input + output + cacheRead + cacheCreation,
      // ag counts what the session spent, not the agent's context window: 0 says unknown.
      size: 0,
      cost: { amount: metrics.estimatedCost.usd, currency: "USD" },
      _meta: { ag: { tokens: metrics.tokens, unpriced: metrics.estimatedCost.unpriced } },
    });
  }

  /** Creates the session with the prompt (the events of its first moments kept aside meanwhile). */
  async function launch(body: Record<string, unknown>): Promise<void> {
    const held: FeedEvent[] = [];
    early = held;
    let created: Created;
    try {
      created = await api.send<Created>("POST", "/v1/sessions", body);
    } finally {
      early = null;
    }
    agId = created.id;
    for (const event of held) onEvent(event);
    if (!created.promptDelivery?.delivered) throw notDelivered(created.id, created.promptDelivery?.attempts);
  }

  /**
   * The turn is under way: the editor learns the ag session that runs it (its name as the title,
   * its id in `_meta`), before the first entry of the turn is in the transcript.
   */
  async function announce(id: string): Promise<void> {
    const session = await api.get<Session>(`/v1/sessions/${id}`).catch(() => null);
    await notify({
      sessionUpdate: "session_info_update",
      title: session?.name ?? null,
      updatedAt: new Date().toISOString(),
      _meta: { ag: { sessionId: id, status: session?.status ?? null } },
    });
  }

  /**
   * Delivers the prompt (creating the session at the first), then announces the turn. What the
   * transcript gains meanwhile is read after the announcement: the editor hears of the session
   * before it hears of the turn.
   */
  async function start(current: Turn, text: string, launchBody: (text: string) => Record<string, unknown>) {
    const announced = Promise.withResolvers<void>();
    reading = reading.then(() => announced.promise);
    try {
      try {
        if (agId) await deliver(agId, text);
        else await launch(launchBody(text));
      } finally {
        current.delivered.resolve();
      }
      await announce(agId!);
    } finally {
      announced.resolve();
    }
  }

  async function deliver(id: string, text: string): Promise<void> {
    const delivery = await api.send<{ delivered: boolean; attempts: number }>(
      "POST",
      `/v1/sessions/${id}/send`,
      { text },
    );
    if (!delivery.delivered) throw notDelivered(id, delivery.attempts);
  }

  return {
    acpId,
    cwd,
    agId: () => agId,
    choices: () => choices,
    setChoices(next) {
      choices = next;
    },

    async load(session) {
      agId = session.id;
      await read();
      relay(session.pendingPermission);
    },

    async prompt(text, launchBody) {
      if (turn) throw new AgError("SESSION_BUSY", "a prompt of this session is still running");
      await feed.opened;
      const current: Turn = {
        outcome: Promise.withResolvers(),
        delivered: Promise.withResolvers(),
        cancelled: false,
      };
      turn = current;
      ownPrompts.push(text.trim());
      try {
        await start(current, text, launchBody);
        const outcome = await current.outcome.promise;
        const id = agId!;
        // ag reports a turn's end before its last lines are written: /read waits for them.
        await api.get(`/v1/sessions/${id}/read`).catch(() => null);
        await read();
        await usage(id);
        const cancelled = current.cancelled || outcome === "interrupted";
        if (outcome === "failed" && !cancelled)
          throw new AgError("AGENT_UNAVAILABLE", `the turn of session ${id} failed`);
        if (outcome === "ended")
          throw new AgError("AGENT_UNAVAILABLE", `session ${id} ended during the turn`);
        // Which ag session ran it: for the editor's link to the dashboard, the REST API, the CLI.
        return { stopReason: cancelled ? "cancelled" : "end_turn", _meta: { ag: { sessionId: id } } };
      } finally {
        turn = null;
      }
    },

    async cancel() {
      const current = turn;
      if (!current) return;
      current.cancelled = true;
      asking?.withdraw.abort();
      asking = null;
      // Right behind the prompt: the agent is interrupted once it has the prompt, not before.
      await current.delivered.promise;
      if (!agId) return;
      try {
        await api.send("POST", `/v1/sessions/${agId}/interrupt`);
      } catch (error) {
        // Idle already (the turn ended as the cancel came): the prompt's answer says cancelled.
        if (error instanceof AgError && error.code === "CONFLICT") current.outcome.resolve("interrupted");
        else deps.warn(`interrupting: ${error instanceof Error ? error.message : error}`);
      }
    },

    close() {
      unsubscribe();
      asking?.withdraw.abort();
      turn?.outcome.resolve("ended");
    },
  };
}

function notDelivered(id: string, attempts = 0): AgError {
  return new AgError(
    "AGENT_UNAVAILABLE",
    `the agent of session ${id} did not take the prompt (${attempts} attempts); the dashboard shows why`,
  );
}
