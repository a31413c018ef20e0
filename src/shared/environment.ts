/**
 * The environment of everything ag starts on someone else's behalf: agents (both drivers, and
 * the tmux server they run in), verification steps, ag's own git commands in a user's folder, an
 * agent's helper processes (OpenCode's fork server). Built here and nowhere else.
 *
 * Policy: ag's environment minus ag's own namespace (a denylist), then the variables that would
 * change an agent's own safety checks neutralised. Not an allowlist: an agent legitimately needs
 * an open-ended set of the user's variables (its provider keys, proxies, CA bundles, locale,
 * PATH, HOME, cloud credentials…), and an allowlist would break every one ag did not foresee.
 * What must never reach an agent is what is ag's: its master token, channel secrets, settings.
 * docs/sessions.md, "What an agent inherits".
 */

/** ag's namespace: every setting (SVC_*) and anything named for ag (AG_*). */
const AG_PREFIXES = ["SVC_", "AG_"] as const;

/** ag's settings outside its prefixes (config/schema.ts; a unit test keeps the two in step). */
const AG_NAMES: ReadonlySet<string> = new Set([
  "AGENT_DATA_DIR",
  "MODEL_FAST",
  "MODEL_STANDARD",
  "MODEL_POWER",
]);

/**
 * Inherited variables that change what an agent checks or refuses, whatever ag's session asks:
 * an adapter sets them itself when a session needs them (Claude Code's IS_SANDBOX for
 * bypassPermissions as root). IS_SANDBOX=yes, set on many container hosts, turns Claude Code's
 * root check off for every mode; CLAUDECODE (set inside a Claude Code session) makes it refuse
 * to start nested; TMUX / TMUX_PANE name the user's own tmux, which tmux refuses to nest in.
 */
const NEUTRALISED: ReadonlySet<string> = new Set(["IS_SANDBOX", "CLAUDECODE", "TMUX", "TMUX_PANE"]);

/**
 * POSIX's portable names only: bash's exported functions (`BASH_FUNC_f%%`, code a shell runs at
 * start — shellshock's carrier) and other oddities stay out, and every name passes tmux's `-e`.
 */
const PORTABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a variable is ag's own (a setting or secret): it never reaches an agent or a command. */
export function isAgVariable(name: string): boolean {
  return AG_NAMES.has(name) || AG_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The environment ag's children start from: `inherited` (ag's own) by the policy above. */
export function declaredEnvironment(
  inherited: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(inherited)) {
    if (value === undefined || !PORTABLE_NAME.test(name) || isAgVariable(name) || NEUTRALISED.has(name))
      continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * One session's environment: the declared base, then what the session itself sets (its adapter's
 * launch plan: SVC_SESSION_ID, IS_SANDBOX when it needs it, a template's or request's `env`).
 */
export function sessionEnvironment(
  base: Record<string, string>,
  own: Record<string, string>,
): Record<string, string> {
  return { ...base, ...own };
}

/**
 * For ag's own git commands: the declared base without any inherited GIT_* (GIT_DIR,
 * GIT_CONFIG_*… would point git elsewhere or add config), then `fixed` (git.ts's own).
 */
export function gitEnvironment(
  fixed: Record<string, string>,
  inherited: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const base = declaredEnvironment(inherited);
  for (const name of Object.keys(base)) if (name.startsWith("GIT_")) delete base[name];
  return { ...base, ...fixed };
}
