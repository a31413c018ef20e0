import { defineCommand } from "citty";
import type { CheckpointDiff, CheckpointList, RewindResult } from "../../checkpoints/index.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine, printTable } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";

/** A turn given on the command line: a whole number from `min`. */
function parseTurn(value: string | undefined, min: number): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new AgError("USAGE_ERROR", `a turn is a whole number from ${min}, got "${value}"`);
  return Number(value);
}

/**
 * `ag diff <session> [turn]`: without a turn, the session's checkpoints (a line per turn: its
 * prompt, files and lines +/-); with one, what that turn changed, as a unified diff.
 */
export const diffCommand = defineCommand({
  meta: { name: "diff", description: "A session's turns and what each changed; with a turn, its diff" },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    turn: { type: "positional", required: false, description: "The turn whose diff to print" },
    json: { type: "boolean", description: "Machine-readable output: the API's answer" },
  },
  async run({ args }) {
    const turn = parseTurn(args.turn, 1);
    const { client } = connect(args);
    const id = await resolveSessionId(client, args.session);
    if (turn !== undefined) {
      const diff = await client.get<CheckpointDiff>(sessionPath(id, `checkpoints/${turn}/diff`));
      if (args.json) printJson(diff);
      else printLine(diff.patch === "" ? `turn ${turn} changed no file` : diff.patch.trimEnd());
      return;
    }
    const list = await client.get<CheckpointList>(sessionPath(id, "checkpoints"));
    if (args.json) return printJson(list);
    if (list.checkpoints.length === 0) return printLine("no checkpoints yet");
    printTable(
      ["TURN", "FILES", "+", "-", "PROMPT"],
      list.checkpoints.map((c) => [
        String(c.turn),
        c.endedAt === null ? "(under way)" : c.files.map((f) => f.path).join(", ") || "-",
        String(c.added),
        String(c.removed),
        (c.prompt ?? "").replace(/\s+/g, " ").slice(0, 60),
      ]),
    );
  },
});

/** `ag rewind <session> <turn> [--what code|conversation|both]`, or `ag rewind <session> --undo`. */
export const rewindCommand = defineCommand({
  meta: {
    name: "rewind",
    description: "Put a session's folder (and/or conversation) back as turn n left it; --undo takes it back",
  },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    turn: { type: "positional", required: false, description: "n: as turn n left it; 0: before the first" },
    what: { type: "string", description: "code (default), conversation or both" },
    undo: { type: "boolean", description: "Take back the last code rewind" },
    json: { type: "boolean", description: "Machine-readable output: the API's answer" },
  },
  async run({ args }) {
    const turn = parseTurn(args.turn, 0);
    if (Boolean(args.undo) === (turn !== undefined))
      throw new AgError("USAGE_ERROR", "give a turn to rewind to, or --undo (not both)");
    const what = args.what ?? "code";
    if (!["code", "conversation", "both"].includes(what))
      throw new AgError("USAGE_ERROR", `--what is code, conversation or both, got "${what}"`);
    const { client } = connect(args, { timeoutMs: (c) => c.createWaitMs + 10_000 });
    const id = await resolveSessionId(client, args.session);
    const body = args.undo ? { undo: true } : { turn, what };
    const result = await client.send<RewindResult>("POST", sessionPath(id, "rewind"), body);
    if (args.json) return printJson(result);
    if (result.code)
      printLine(
        `${result.what === "undo" ? "undid the rewind to" : "rewound the folder to"} turn ${result.turn}: ${result.code.files} file(s) written or removed`,
      );
    if (result.conversation)
      printLine(
        `the conversation as of turn ${result.turn} continues in session ${result.conversation.sessionId}`,
      );
  },
});
