import { relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { currentAuthToken, type LoadedConfig, loadConfig } from "../../config/load.ts";
import { bootstrapProjectConfig } from "../../init/project.ts";
import { startBackgroundServer } from "../../server/background.ts";
import { AgError } from "../../shared/errors.ts";
import { selfCommand } from "../../shared/self.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient, resolveServerUrl } from "../client.ts";
import { dashboardUrl } from "../connect.ts";
import { printFields, printNote, startSpinner } from "../output.ts";
import { streamTurn } from "../turn-stream.ts";
import {
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

/**
 * `ag run "<prompt>"`: one command from nothing to an agent's answer. With no server up it
 * bootstraps the project's config and starts one (at a terminal, without --yes, it asks before
 * writing that config); the turn itself is followed by turn-stream.ts.
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
    // Asked at each request: a server started below generates its token only when it starts.
    const token = () => currentAuthToken(loaded.config);
    // Flags ag can refuse by itself are refused before a server is looked for or started.
    const input = createInput(args, args.prompt);
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

async function answers(baseUrl: string, token: () => string): Promise<boolean> {
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
  const { stateDir } = loaded.config;
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
      if (await answers(url, () => currentAuthToken(loaded.config))) return url;
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
