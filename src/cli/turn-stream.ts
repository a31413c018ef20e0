import { sessionUrl } from "../shared/dashboard-links.ts";
import { attachSession } from "./commands/attach.ts";
import {
  type Created,
  type CreateInput,
  createSession,
  isDelivered,
  notDelivered,
  reusedNote,
} from "./commands/create.ts";
import type { Connection } from "./connect.ts";
import { followEvents, type StreamedEvent } from "./events.ts";
import { canAsk } from "./keys.ts";
import { printLine, printNote } from "./output.ts";
import { askAtTerminal, terminalPromptDeps } from "./prompt.ts";
import { abortOnInterrupt } from "./signals.ts";
import { createTurnFollower, type TurnEnd, type TurnStep } from "./turn.ts";
import { createWaitIndicator, type WaitIndicator } from "./waiting.ts";

/** After the turn's end and the server's settled /read, how long a quiet stream means nothing is left. */
const DRAIN_QUIET_MS = 300;

/**
 * Holds output back while the person's terminal belongs to tmux (attached from a prompt), and
 * lets it out, in order, when they detach. Every write erases the waiting spinner's line first.
 */
function createGate(waiting: WaitIndicator) {
  let held: Array<() => void> | null = null;
  const pass = (write: () => void) => (held ? held.push(write) : waiting.around(write));
  return {
    print: (text: string) => pass(() => printLine(text)),
    note: (text: string) => pass(() => printNote(text)),
    hold() {
      held ??= [];
      waiting.pause("attached");
    },
    release() {
      const writes = held ?? [];
      held = null;
      for (const write of writes) waiting.around(write);
      waiting.resume("attached");
    },
  };
}

/**
 * Creates the session and prints its assistant text as it arrives until the turn ends. The
 * all-sessions stream opens BEFORE the session exists, so no event of it can be missed; its
 * events are told apart by id once creation answers. A prompt the agent stops at is offered to
 * the person at a terminal (prompt.ts); elsewhere, how to answer it is noted on stderr.
 */
export async function streamTurn(
  connection: Connection,
  input: CreateInput,
  dashboard: string,
): Promise<TurnEnd | "interrupted"> {
  const { client } = connection;
  const interactive = canAsk();
  const waiting = createWaitIndicator();
  const out = createGate(waiting);
  const interrupt = abortOnInterrupt();
  const stop = new AbortController();
  const signal = AbortSignal.any([interrupt.signal, stop.signal]);
  const opened = Promise.withResolvers<void>();
  const early: StreamedEvent[] = [];
  let follower: ReturnType<typeof createTurnFollower> | null = null;
  let created: Created | null = null;
  let end: TurnEnd | null = null;
  /** The prompt being asked about (or left for later), withdrawn when the session moves on. */
  let asking: { id: string; withdraw: AbortController } | null = null;
  /** The question at the terminal; awaited at the end: a person attached from it must detach first. */
  let askTask: Promise<unknown> = Promise.resolve();

  const attach = async () => {
    out.hold();
    try {
      await attachSession(connection, created!, false);
    } finally {
      out.release();
    }
  };
  const promptDeps = terminalPromptDeps(client, attach, out.note);

  const onPending = (step: TurnStep) => {
    if (step.pending === undefined) return;
    // The agent waits for a person, not working: no spinner (nor one drawn over the question).
    if (step.pending) waiting.pause("pending");
    else waiting.resume("pending");
    if (asking && asking.id !== step.pending?.id) {
      asking.withdraw.abort();
      asking = null;
    }
    if (!step.ask || asking) return;
    if (!interactive) {
      if (step.note) out.note(step.note);
      asking = { id: step.ask.id, withdraw: new AbortController() };
      return;
    }
    const withdraw = new AbortController();
    asking = { id: step.ask.id, withdraw };
    const previous = askTask;
    const ask = step.ask;
    askTask = previous.then(() =>
      askAtTerminal(created!, ask, AbortSignal.any([signal, withdraw.signal]), promptDeps),
    );
  };

  const handle = (event: StreamedEvent): boolean => {
    if (!follower) {
      early.push(event);
      return false;
    }
    const step = follower.step(event);
    if (step.print !== undefined) {
      out.print(step.print);
      waiting.wait(`${created!.agent} is still working`);
    }
    onPending(step);
    if (step.end && end === null) {
      end = step.end;
      // Over: what is still to come (the last lines, drained below) needs no waiting.
      waiting.stop();
      if (end === "turn") void finishTurn();
      else return true;
    }
    return false;
  };
  /** The agent reports a turn's end before its last lines are written: /read waits for them. */
  async function finishTurn() {
    const read = await client.get<{ output: string }>(`/v1/sessions/${created!.id}/read`).catch(() => null);
    let seen = follower!.printed();
    for (;;) {
      await Bun.sleep(DRAIN_QUIET_MS);
      if (follower!.printed() === seen) break;
      seen = follower!.printed();
    }
    if (follower!.printed() === 0 && read?.output) out.print(read.output);
    stop.abort();
  }

  const following = followEvents(client, "/v1/events", {
    signal,
    onOpen: () => opened.resolve(),
    onEvent: handle,
    onReconnect: (why) => out.note(`reconnecting to the event stream: ${why}`),
  }).then(
    (outcome) => {
      opened.resolve(); // Ctrl+C before the stream opened: nothing to wait for
      return outcome;
    },
    (error) => {
      opened.reject(error);
      throw error;
    },
  );
  try {
    await opened.promise;
    if (signal.aborted) return "interrupted";
    created = await createSession(client, input);
    printNote(`session ${created.name} (${created.id})`);
    if (created.reused) printNote(reusedNote(created));
    if (!isDelivered(created)) throw notDelivered(created);
    follower = createTurnFollower(created.id);
    waiting.wait(`waiting for ${created.agent}'s answer`);
    // What arrived while creation ran: a quick turn may already be over.
    for (const event of early.splice(0)) if (handle(event)) stop.abort();
    if (!signal.aborted) await following;
    waiting.stop();
    if (interrupt.interrupted() && end === null) {
      printNote(`stopped following; the session goes on: ag tail ${created.id.slice(0, 8)}`);
      return "interrupted";
    }
    return end ?? "interrupted";
  } finally {
    waiting.stop();
    stop.abort();
    await following.catch(() => {});
    await askTask.catch(() => {});
    out.release();
    interrupt.release();
    // Where to go on: the session's own page (its pending card, terminal, transcript). A create
    // that was refused made no page to go to.
    if (created) printNote(`dashboard: ${sessionUrl(dashboard, created.id)}`);
  }
}
