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

export const QuestionOption = Type.Object({
  index: Type.Integer({ minimum: 1, description: "the option's number in the dialog (answer with it)" }),
  label: Type.String(),
  description: Type.Optional(Type.String()),
  optionId: Type.Optional(
    Type.String({ description: "an ACP session's permission: the agent's own id of the option" }),
  ),
});

export const PendingPermission = Type.Object({
  id: Type.String(),
  kind: Type.Union([
    Type.Literal("tool"),
    Type.Literal("plan"),
    Type.Literal("trust"),
    Type.Literal("question"),
  ]),
  tool: Type.Optional(Type.String()),
  detail: Type.String(),
  /**
   * Which of the agent's own dialogs a `trust` prompt is: its answer keys differ per dialog, and
   * `detail` is prose for people. Named by the agent adapter.
   */
  dialog: Type.Optional(
    Type.String({
      description: "the agent's dialog, for kind trust: folder-trust, api-key, bypass-permissions",
    }),
  ),
  question: Type.Optional(Type.String({ description: "kind question: what the agent asks" })),
  plan: Type.Optional(
    Type.String({
      description: "kind plan: the plan in full, as the agent hands it in (up to 20000 characters)",
    }),
  ),
  options: Type.Optional(
    Type.Array(QuestionOption, {
      description:
        "kind question, and a tool permission of an ACP session: the agent's options, answered by number",
    }),
  ),
  toolInput: Type.Optional(
    Type.Unknown({ description: "an ACP session's tool permission: the tool call as the agent sent it" }),
  ),
  multiSelect: Type.Optional(
    Type.Boolean({ description: "kind question: more than one option may be picked" }),
  ),
  questions: Type.Optional(
    Type.Integer({
      minimum: 2,
      description: "kind question: how many questions the dialog asks, when more than one",
    }),
  ),
});
export type PendingPermission = Static<typeof PendingPermission>;
