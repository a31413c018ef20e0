import { relative, resolve } from "node:path";
import { currentAuthToken, type LoadedConfig } from "../config/load.ts";
import { bootstrapProjectConfig } from "../init/project.ts";
import { startBackgroundServer } from "../server/background.ts";
import { AgError } from "../shared/errors.ts";
import { selfCommand } from "../shared/self.ts";
import { createApiClient, resolveServerUrl } from "./client.ts";
import { printNote, startSpinner } from "./output.ts";

/** How long a server started in the background has to answer (SPEC). */
const START_WAIT_MS = 15_000;

/**
 * The base URL of a server that answers: the one the config and `--port` point at, else one
 * started in the background with the same config (`ag run`, `ag acp`). Before it starts one, the
 * project's starter config is written (asked first at a terminal, unless `yes`).
 */
export async function ensureServer(
  loaded: LoadedConfig,
  options: { portFlag?: number; configFlag?: string; yes: boolean },
): Promise<string> {
  const token = () => currentAuthToken(loaded.config);
  const baseUrl = resolveServerUrl(loaded, options.portFlag);
  if (await answers(baseUrl, token)) return baseUrl;
  await bootstrapConfig(options.yes);
  return startServer(loaded, options.portFlag, options.configFlag);
}

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
