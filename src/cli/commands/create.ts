import { resolve } from "node:path";
import type { Static } from "@sinclair/typebox";
import { defineCommand } from "citty";
import { sessionUrl } from "../../channels/link.ts";
import type { CreatedSession } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect, dashboardUrl } from "../connect.ts";
import { printFields, printJson, startSpinner } from "../output.ts";

export type Created = Static<typeof CreatedSession>;

/**
 * POST /v1/sessions with the prompt. The server answers only once the prompt is delivered and
 * confirmed by the agent (or delivery failed after its retries), so there is nothing to poll.
 */
export async function createSession(
  client: ApiClient,
  input: { workDir: string; prompt: string; name?: string },
): Promise<Created> {
  // The agent's start-up and the delivery take seconds: show that something is going on.
  const spinner = startSpinner("waiting for the agent to take the prompt");
  try {
    return await client.send<Created>("POST", "/v1/sessions", input);
  } finally {
    spinner.stop();
  }
}

export function isDelivered(created: Created): boolean {
  return created.promptDelivery?.delivered === true;
}

/** The error that makes the command exit 1 after it has shown the session. */
export function notDelivered(created: Created): AgError {
  const attempts = created.promptDelivery?.attempts ?? 0;
  return new AgError(
    "AGENT_UNAVAILABLE",
    `the agent of session ${created.id} did not take the prompt (${attempts} attempt${attempts === 1 ? "" : "s"}); see ag read ${created.id.slice(0, 8)} or the dashboard`,
  );
}

export function createdFields(created: Created, dashboard: string): Array<[string, string]> {
  const delivery = created.promptDelivery;
  return [
    ["id", created.id],
    ["name", created.name],
    ["workDir", created.workDir],
    ["status", created.reused ? `${created.status} (reused an idle session)` : created.status],
    [
      "prompt",
      delivery
        ? `${delivery.delivered ? "delivered" : "NOT delivered"} (${delivery.attempts} attempt(s))`
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
    cwd: {
      type: "string",
      description: "The session's working directory (default: this one)",
      valueHint: "dir",
    },
    name: { type: "string", description: "A name for the session" },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { loaded, client } = connect(args, { timeoutMs: (c) => createTimeoutMs(c.createWaitMs) });
    const created = await createSession(client, {
      workDir: resolve(args.cwd ?? process.cwd()),
      prompt: args.brief,
      ...(args.name ? { name: args.name } : {}),
    });
    if (args.json) printJson(created);
    else printFields(createdFields(created, dashboardUrl(loaded, client.baseUrl)));
    if (!isDelivered(created)) throw notDelivered(created);
  },
});
