import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { defineCommand } from "citty";
import { currentAuthToken } from "../../config/load.ts";
import { createEditorAgent, type EventFeed, type FeedEvent } from "../../editor/index.ts";
import { VERSION } from "../../version.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { type ApiClient, createApiClient } from "../client.ts";
import { followEvents } from "../events.ts";
import { ensureServer } from "../server-start.ts";
import { stdioCommandSetup } from "../stdio.ts";
import { createInput, createTimeoutMs, SESSION_FLAGS } from "./create.ts";

const { agent, driver, "permission-mode": permissionMode, model } = SESSION_FLAGS;

/**
 * `ag acp`: ag as an ACP agent on stdin/stdout, for editors (Zed, JetBrains, Neovim, acpx). It
 * drives the running ag server through its REST API and its event stream, starting one in the
 * background as `ag run` does when none answers. The flags set what a new session starts with.
 */
export default defineCommand({
  meta: { name: "acp", description: "Serve the Agent Client Protocol (stdio) for editors, backed by ag" },
  args: {
    ...GLOBAL_ARGS,
    agent,
    driver,
    "permission-mode": permissionMode,
    model,
    template: {
      type: "string",
      description: "A template every new session starts from (its agentCommand, env, memory…)",
      valueHint: "id",
    },
  },
  async run({ args }) {
    const { loaded, logger } = stdioCommandSetup(args.config);
    // The flags are checked as `ag run` checks them, before a server is looked for.
    const flags = createInput(args, "");
    const baseUrl = await ensureServer(loaded, {
      portFlag: parsePortFlag(args.port),
      configFlag: args.config,
      yes: true,
    });
    const api = createApiClient({
      baseUrl,
      token: () => currentAuthToken(loaded.config),
      timeoutMs: createTimeoutMs(loaded.config.createWaitMs),
    });
    const stop = new AbortController();
    // Without ag's events no turn can be followed: the stream failing for good ends ag acp.
    const feed = serverFeed(api, stop.signal, {
      warn: (why) => logger.warn(why),
      failed: (error) => connection.close(error),
    });
    const { config } = loaded;
    const app = createEditorAgent({
      api,
      feed,
      version: VERSION,
      defaults: {
        agent: config.defaultAgent,
        driver: "tmux",
        permissionMode: config.permissionMode,
        model: null,
      },
      chosen: {
        ...(flags.agent ? { agent: flags.agent } : {}),
        ...(flags.driver ? { driver: flags.driver } : {}),
        ...(flags.permissionMode ? { permissionMode: flags.permissionMode } : {}),
        ...(flags.model ? { model: flags.model } : {}),
      },
      templateId: args.template,
      models: [config.modelFast, config.modelStandard, config.modelPower],
      warn: (message) => logger.warn(message),
    });
    const connection = app.connect(
      acp.ndJsonStream(
        Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
        Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>,
      ),
    );
    logger.debug(`ag acp ${VERSION} serving ${baseUrl} over stdio`);
    await connection.closed;
    stop.abort();
  },
});

/** The server's event stream, opened once and shared by every session of this process. */
function serverFeed(
  api: ApiClient,
  signal: AbortSignal,
  on: { warn(why: string): void; failed(error: unknown): void },
): EventFeed {
  const listeners = new Set<(event: FeedEvent) => void>();
  const opened = Promise.withResolvers<void>();
  // A failure before any prompt waited for the stream is reported by on.failed, not unhandled.
  opened.promise.catch(() => {});
  void followEvents(api, "/v1/events", {
    signal,
    onOpen: () => opened.resolve(),
    onEvent(event) {
      for (const listener of listeners) listener(event);
      return false;
    },
    onReconnect: (why) => on.warn(`reconnecting to ag's event stream: ${why}`),
  }).catch((error) => {
    on.warn(`ag's event stream failed: ${error instanceof Error ? error.message : error}`);
    opened.reject(error);
    on.failed(error);
  });
  return {
    opened: opened.promise,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
