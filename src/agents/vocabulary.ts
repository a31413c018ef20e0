import { type Static, Type } from "@sinclair/typebox";

/**
 * The words ag and every agent adapter share: the dialog a session waits on, token counts, the
 * permission modes a session may ask for, and the header of a hook's secret. TypeBox only (the
 * event catalog, which the dashboard bundles, imports it); agents/ imports nothing of sessions/.
 */

/**
 * The session drivers, the one list of their names: the agent's terminal UI in tmux, or headless
 * over ACP. Here (not in drivers/) because each adapter declares the drivers it has and agents/
 * sits below drivers/; what each driver can do is `DRIVER_TRAITS` (drivers/traits.ts).
 */
export const DRIVER_NAMES = ["tmux", "acp"] as const;
export type DriverName = (typeof DRIVER_NAMES)[number];

/**
 * The permission modes a session may ask for: ag's own, agent-neutral words (SPEC names them).
 * Each adapter maps the ones its agent has to its own flags (`permissionModes`) and a create
 * asking for one it lacks is refused (PERMISSION_MODE_UNSUPPORTED). docs/agents.md has the table.
 * - default: the agent asks before edits and commands;
 * - acceptEdits: file edits go through, commands still ask;
 * - bypassPermissions: nothing asks;
 * - plan: read-only planning, nothing is changed;
 * - dontAsk: what would ask is refused instead;
 * - auto: the agent decides what needs asking.
 */
export const PERMISSION_MODES = [
  "default",
  "bypassPermissions",
  "plan",
  "acceptEdits",
  "dontAsk",
  "auto",
] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/**
 * The modes from the one that lets an agent do least to the one that lets it do most: plan
 * changes nothing; dontAsk refuses what default would ask a person about; acceptEdits lets edits
 * through unasked; auto lets the agent judge commands too; bypassPermissions asks nothing. A
 * session a session key creates never stands higher than its creator (src/sessions/offspring.ts).
 */
export const PERMISSIVENESS = [
  "plan",
  "dontAsk",
  "default",
  "acceptEdits",
  "auto",
  "bypassPermissions",
] as const satisfies readonly PermissionMode[];

/** Whether mode `a` lets an agent do more unasked than mode `b`. */
export function morePermissive(a: PermissionMode, b: PermissionMode): boolean {
  return PERMISSIVENESS.indexOf(a) > PERMISSIVENESS.indexOf(b);
}

/** Token counts, of a message, a session or a model. */
export const TokenCounts = Type.Object({
  input: Type.Integer(),
  output: Type.Integer(),
  cacheRead: Type.Integer(),
  cacheCreation: Type.Integer(),
});
export type TokenCounts = Static<typeof TokenCounts>;

export const NO_TOKENS: TokenCounts = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };

/** Two counts added up, each kind of token apart. */
export function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheCreation: a.cacheCreation + b.cacheCreation,
  };
}

/**
 * The larger of two counts, each kind of token apart: a message's lines repeat its usage, and a
 * streamed one may write a smaller count first.
 */
export function maxTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: Math.max(a.input, b.input),
    output: Math.max(a.output, b.output),
    cacheRead: Math.max(a.cacheRead, b.cacheRead),
    cacheCreation: Math.max(a.cacheCreation, b.cacheCreation),
  };
}

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cacheRead?: number;
  cacheCreation?: number;
}

/** Prices by fragment of a model's name (the first fragment found in the name wins). */
export type PriceTable = Record<string, Price>;

/** The header that carries a session's hook secret (never the URL). */
export const HOOK_SECRET_HEADER = "X-Svc-Hook-Secret";

/** The dialog a session waits on: the event catalog's shape (a `permission.requested` carries it). */
export { PendingPermission, QuestionOption } from "../events/names.ts";
