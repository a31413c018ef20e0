import { resolve } from "node:path";
import type { Static } from "@sinclair/typebox";
import { defineCommand } from "citty";
import { DRIVER_NAMES, type DriverName } from "../../agents/vocabulary.ts";
import { PERMISSION_MODES, type PermissionMode } from "../../config/schema.ts";
import type { CreatedSession } from "../../sessions/index.ts";
import { sessionUrl } from "../../shared/dashboard-links.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect, dashboardUrl } from "../connect.ts";
import { plural, printFields, printJson, printNote, startSpinner } from "../output.ts";

export type Created = Static<typeof CreatedSession>;

/**
 * POST /v1/sessions with the prompt. The server answers only once the prompt is delivered and
 * confirmed by the agent (or delivery failed after its retries), so there is nothing to poll.
 */
export async function createSession(client: ApiClient, input: CreateInput): Promise<Created> {
  // The agent's start-up and the delivery take seconds: at a terminal a spinner shows that
  // something is going on, and goes without a trace. Nothing is written elsewhere: a line saying
  // "waiting" would stand before a refusal, which the server gives at once.
  const spinner = process.stderr.isTTY ? startSpinner("waiting for the agent to take the prompt") : null;
  try {
    return await client.send<Created>("POST", "/v1/sessions", input);
  } catch (error) {
    // A server from before `reuse` refuses the unknown field: say what that means here.
    if (error instanceof AgError && error.code === "VALIDATION_ERROR" && /\breuse\b/.test(error.message)) {
      throw new AgError(
        "VALIDATION_ERROR",
        `this ag server does not know --new yet (it refused reuse: false: ${error.message}); update the server, or leave --new out`,
      );
    }
    throw error;
  } finally {
    spinner?.stop();
  }
}

export interface CreateInput {
  workDir: string;
  prompt: string;
  name?: string;
  agent?: string;
  driver?: DriverName;
  permissionMode?: PermissionMode;
  model?: string;
  /** false: never reuse an idle session (CLI --new). */
  reuse?: false;
  /** In a fleet: the host to run it on, or `auto` (CLI --host). */
  host?: string;
}

/** The session flags as given on the command line (SESSION_FLAGS). */
export interface SessionFlagValues {
  cwd?: string;
  name?: string;
  agent?: string;
  driver?: string;
  "permission-mode"?: string;
  model?: string;
  new?: boolean;
  host?: string;
}

/**
 * The request for `--cwd`, the prompt, `--name`, `--agent`, `--driver`, `--permission-mode`,
 * `--model` and `--new`. A driver or permission mode the API has no such value for is refused
 * here, naming the ones it has; whether the agent has that mode is the server's answer
 * (UNSUPPORTED_BY_AGENT). The model goes as given: the agent knows its models, ag does not.
 */
export function createInput(args: SessionFlagValues, prompt: string): CreateInput {
  if (args.driver !== undefined && !isDriverName(args.driver))
    throw new AgError("USAGE_ERROR", `--driver is ${DRIVER_NAMES.join(" or ")}, not ${args.driver}`);
  const mode = args["permission-mode"];
  if (mode !== undefined && !isPermissionMode(mode))
    throw new AgError(
      "USAGE_ERROR",
      `--permission-mode is one of ${PERMISSION_MODES.join(", ")}, not ${mode || '""'} (ag agents lists each agent's)`,
    );
  if (args.model !== undefined && args.model.trim() === "")
    throw new AgError("USAGE_ERROR", "--model needs a model name (ag uses the agent's default without it)");
  return {
    workDir: resolve(args.cwd ?? process.cwd()),
    prompt,
    ...(args.name ? { name: args.name } : {}),
    ...(args.agent ? { agent: args.agent } : {}),
    ...(args.driver ? { driver: args.driver } : {}),
    ...(mode ? { permissionMode: mode } : {}),
    ...(args.model ? { model: args.model.trim() } : {}),
    ...(args.new ? { reuse: false as const } : {}),
    ...(args.host ? { host: args.host } : {}),
  };
}

function isPermissionMode(value: string): value is PermissionMode {
  return (PERMISSION_MODES as readonly string[]).includes(value);
}

function isDriverName(value: string): value is DriverName {
  return (DRIVER_NAMES as readonly string[]).includes(value);
}

/** The one line that says an idle session took the prompt instead of a new one. */
export function reusedNote(created: Created): string {
  return `reused the idle session ${created.name} (${created.id.slice(0, 8)}) in ${created.workDir}; --new starts a fresh one`;
}

/** Flags of `ag create` and `ag run` that shape the session. */
export const SESSION_FLAGS = {
  cwd: {
    type: "string",
    description: "The session's working directory (default: this one)",
    valueHint: "dir",
  },
  name: { type: "string", description: "A name for the session", valueHint: "name" },
  agent: {
    type: "string",
    description:
      "The agent CLI to run: claude, codex, gemini, opencode (ag agents lists them; default the server's)",
    valueHint: "agent",
  },
  driver: {
    type: "string",
    description:
      "tmux (default): the agent's terminal UI in a tmux window; acp: headless over the Agent Client Protocol (ag agents says which agents have it)",
    valueHint: "tmux|acp",
  },
  "permission-mode": {
    type: "string",
    description: `How the agent asks before it acts: ${PERMISSION_MODES.join(", ")} (ag agents lists each agent's; default the server's permissionMode)`,
    valueHint: "mode",
  },
  model: {
    type: "string",
    description:
      "The model the agent runs, as that agent names it (opus, gpt-5-codex, gemini-2.5-pro, provider/model for OpenCode); default the agent's own",
    valueHint: "model",
  },
  new: {
    type: "boolean",
    description: "Always start a new session: never hand the prompt to an idle one in the same directory",
  },
} as const;

export function isDelivered(created: Created): boolean {
  return created.promptDelivery?.delivered === true;
}

/** The error that makes the command exit 1 after it has shown the session. */
export function notDelivered(created: Created): AgError {
  const attempts = created.promptDelivery?.attempts ?? 0;
  return new AgError(
    "AGENT_UNAVAILABLE",
    `the agent of session ${created.id} did not take the prompt (${plural(attempts, "attempt")}); see ag read ${created.id.slice(0, 8)} or the dashboard`,
  );
}

export function createdFields(created: Created, dashboard: string): Array<[string, string]> {
  const delivery = created.promptDelivery;
  return [
    ["id", created.id],
    ["name", created.name],
    ["workDir", created.workDir],
    ["status", created.reused ? `${created.status} (reused an idle session)` : created.status],
    ["mode", created.permissionMode],
    // A server from before `model` leaves it out: the agent's default either way.
    ["model", created.model ?? "the agent's default"],
    [
      "prompt",
      delivery
        ? `${delivery.delivered ? "delivered" : "NOT delivered"} (${plural(delivery.attempts, "attempt")})`
        : "none",
    ],
    ...(created.warnings ?? []).map((w): [string, string] => ["warning", w]),
    ["dashboard", sessionUrl(dashboard, created.id)],
  ];
}

/** Time to wait for an answer: creation waits for the agent, bounded by createWaitMs on the server. */
export function createTimeoutMs(createWaitMs: number): number {
  return Math.max(createWaitMs, 60_000) + 30_000;
}

/** `ag create "<brief>"`: a session in --cwd with the brief as its first prompt. */
export default defineCommand({
  meta: {
    name: "create",
    description: "Create a session with a first prompt, and wait until it is delivered",
  },
  args: {
    ...GLOBAL_ARGS,
    brief: { type: "positional", required: true, description: "The first prompt" },
    ...SESSION_FLAGS,
    host: {
      type: "string",
      description:
        "In a fleet (docs/fleet.md): the host to run it on, or auto (the live host with the most memory headroom that has --cwd)",
      valueHint: "name|auto",
    },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { loaded, client } = connect(args, { timeoutMs: (c) => createTimeoutMs(c.createWaitMs) });
    const created = await createSession(client, createInput(args, args.brief));
    if (args.json) printJson(created);
    else printFields(createdFields(created, dashboardUrl(loaded, client.baseUrl)));
    if (created.reused) printNote(reusedNote(created));
    if (!isDelivered(created)) throw notDelivered(created);
  },
});
