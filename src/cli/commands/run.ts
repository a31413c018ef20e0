import { defineCommand } from "citty";
import { currentAuthToken, loadConfig } from "../../config/load.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient } from "../client.ts";
import { dashboardUrl } from "../connect.ts";
import { printFields, printNote } from "../output.ts";
import { ensureServer } from "../server-start.ts";
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
    const baseUrl = await ensureServer(loaded, { portFlag, configFlag: args.config, yes: args.yes === true });
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
