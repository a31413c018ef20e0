/**
 * The environment for processes ag starts on behalf of agents and projects (the tmux server and
 * so every agent, verification steps): ag's own settings stay out. SVC_AUTH_TOKEN, webhook and
 * channel secrets would otherwise be one `env` away from an agent, and could end up in output
 * that ag returns and publishes.
 */
export function withoutAgSettings(env: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !name.startsWith("SVC_")) kept[name] = value;
  }
  return kept;
}
