import { relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { sessionUrl } from "../../channels/link.ts";
import { type LoadedConfig, loadConfig } from "../../config/load.ts";
import { bootstrapProjectConfig } from "../../init/project.ts";
import { startBackgroundServer } from "../../server/background.ts";
import { AgError } from "../../shared/errors.ts";
import { selfCommand } from "../../shared/self.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient, resolveServerUrl } from "../client.ts";
import { type Connection, dashboardUrl } from "../connect.ts";
import { followEvents, type StreamedEvent } from "../events.ts";
import { canAsk } from "../keys.ts";
import { printFields, printLine, printNote, startSpinner } from "../output.ts";
import { askAtTerminal, terminalPromptDeps } from "../prompt.ts";
import { abortOnInterrupt } from "../signals.ts";
import { createTurnFollower, type TurnEnd, type TurnStep } from "../turn.ts";
import { attachSession } from "./attach.ts";
import {
  type Created,
  type CreateInput,
  createdFields,
  createInput,
  createSession,
  createTimeoutMs,
  isDelivered,
  notDelivered,
  reusedNote,
  SESSION_FLAGS,
} from "./create.ts";

/** How long a server started in the background has to answer (SPEC). */
const START_WAIT_MS = 15_000;
/** After the turn's end and the server's settled /read, how long a quiet stream means nothing is left. */
const DRAIN_QUIET_MS = 300;

/**
 * `ag run "<prompt>"`: one command from nothing to an agent's answer. With no server up it
 * bootstraps the project's config and starts one; the only question it may ask (at a terminal,
 * without --yes) is whether to write that config.
 */
export default defineCommand({
  meta: { name: "run", description: "Start a server if none runs, create a session, stream its answer" },
  args: {
    ...GLOBAL_ARGS,
    prompt: { type: "positional", required: true, description: "The prompt" },
    ...SESSION_FLAGS,
    stream: {
      type: "boolean",
      default: true,
      description: "Print the agent's reply as it comes, until its turn ends",
      negativeDescription: "Create the session, print it and return without waiting for the reply",
    },
    yes: { type: "boolean", description: "Ask nothing: write the starter config without asking" },
  },
  async run({ args }) {
    const loaded = loadConfig({ configPath: args.config });
    const portFlag = parsePortFlag(args.port);
    const token = loaded.config.authToken;
    let baseUrl = resolveServerUrl(loaded, portFlag);
    if (!(await answers(baseUrl, token))) {
      await bootstrapConfig(args.yes === true);
      baseUrl = await startServer(loaded, portFlag, args.config);
    }
    const client = createApiClient({
      baseUrl,
      token,
      timeoutMs: createTimeoutMs(loaded.config.createWaitMs),
    });
    const input = createInput(args, args.prompt);
    const dashboard = dashboardUrl(loaded, baseUrl);

    if (!args.stream) {
      const created = await createSession(client, input);
      printFields(createdFields(created, dashboard));
      if (created.reused) printNote(reusedNote(created));
      if (!isDelivered(created)) throw notDelivered(created);
      return;
    }
    const end = await streamTurn({ loaded, client }, input, dashboard);
    if (end === "failed")
      throw new AgError("AGENT_UNAVAILABLE", "the session's agent died before the turn ended");
  },
});

async function answers(baseUrl: string, token: string): Promise<boolean> {
  try {
    await createApiClient({ baseUrl, token, timeoutMs: 2_000 }).get("/v1/health");
    return true;
  } catch (error) {
    // Any answer, even an error envelope, means a server is there; only silence starts one.
    return !(error instanceof AgError && error.code === "SERVER_UNREACHABLE");
  }
}

/**
 * The starter `.svc/config.yaml` of `ag init` in this directory, unless it has one. Every setting
 * in it is a comment holding its default, so the config already loaded stays right. A person at
 * a terminal is asked first (Enter = yes) unless --yes; a script gets the file without a question.
 */
async function bootstrapConfig(yes: boolean): Promise<void> {
  const cwd = process.cwd();
  const ask = (path: string) =>
    !/^no?$/i.test(
      prompt(`No ${relative(cwd, path)} here: create one with the defaults? [Y/n]`)?.trim() ?? "",
    );
  const created = await bootstrapProjectConfig({
    cwd,
    confirm: !yes && process.stdin.isTTY === true ? ask : undefined,
  });
  if (created)
    printNote(`created ${relative(cwd, created)} (every setting commented out: edit it to change one)`);
}

/** Starts `ag` in the background with the same config and waits (≤ 15 s) until it answers. */
async function startServer(loaded: LoadedConfig, portFlag: number | undefined, configFlag?: string) {
  const { stateDir, authToken } = loaded.config;
  const server = startBackgroundServer({
    argv: [
      ...selfCommand(),
      ...(portFlag === undefined ? [] : ["--port", String(portFlag)]),
      ...(configFlag ? ["--config", resolve(configFlag)] : []),
    ],
    stateDir,
    cwd: process.cwd(),
  });
  printNote(
    `no ag server answered: started one in the background (pid ${server.pid}, log ${server.logPath})`,
  );
  let exitCode: number | null = null;
  void server.exited.then((code) => {
    exitCode = code;
  });
  const spinner = startSpinner("waiting for the server");
  try {
    for (const deadline = Date.now() + START_WAIT_MS; Date.now() < deadline; ) {
      if (exitCode !== null) {
        throw new AgError(
          "SERVER_UNREACHABLE",
          `the background server exited (code ${exitCode}) before answering; its log:\n${server.logTail()}`,
        );
      }
      // Where it listens is known once it has written <stateDir>/server.json (--port 0 picks one).
      const url = resolveServerUrl(loaded, portFlag || undefined);
      if (await answers(url, authToken)) return url;
      await Bun.sleep(100);
    }
  } finally {
    spinner.stop();
  }
  throw new AgError(
    "SERVER_UNREACHABLE",
    `the background server (pid ${server.pid}) did not answer within ${START_WAIT_MS / 1000} s; see ${server.logPath}`,
  );
}

/**
 * Holds output back while the person's terminal belongs to tmux (attached from a prompt), and
 * lets it out, in order, when they detach.
 */
function createGate() {
  let held: Array<() => void> | null = null;
  const pass = (write: () => void) => (held ? held.push(write) : write());
  return {
    print: (text: string) => pass(() => printLine(text)),
    note: (text: string) => pass(() => printNote(text)),
    hold() {
      held ??= [];
    },
    release() {
      const writes = held ?? [];
      held = null;
      for (const write of writes) write();
    },
  };
}

/**
 * Creates the session and prints its assistant text as it arrives until the turn ends. The
 * all-sessions stream opens BEFORE the session exists, so no event of it can be missed; its
 * events are told apart by id once creation answers. A prompt the agent stops at is offered to
 * the person at a terminal (prompt.ts); elsewhere, how to answer it is noted on stderr.
 */
async function streamTurn(
  connection: Connection,
  input: CreateInput,
  dashboard: string,
): Promise<TurnEnd | "interrupted"> {
  const { client } = connection;
  const interactive = canAsk();
  const out = createGate();
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
    if (step.print !== undefined) out.print(step.print);
    onPending(step);
    if (step.end && end === null) {
      end = step.end;
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
    // What arrived while creation ran: a quick turn may already be over.
    for (const event of early.splice(0)) if (handle(event)) stop.abort();
    if (!signal.aborted) await following;
    if (interrupt.interrupted() && end === null) {
      printNote(`stopped following; the session goes on: ag tail ${created.id.slice(0, 8)}`);
      return "interrupted";
    }
    return end ?? "interrupted";
  } finally {
    stop.abort();
    await following.catch(() => {});
    await askTask.catch(() => {});
    out.release();
    interrupt.release();
    // Where to go on: the session's own page (its pending card, terminal, transcript).
    printNote(`dashboard: ${created ? sessionUrl(dashboard, created.id) : dashboard}`);
  }
}
