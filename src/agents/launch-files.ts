import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What every agent's launch does alike: the session's private files (the hook secret, named per
 * launch), the command line of `ag hook` (the forwarder an agent runs as a command hook), and
 * the splitting and quoting of command lines. Nothing here knows one agent.
 */

/** Names one launch's files: a short digest of its secret (never the secret itself). */
export function launchTag(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 12);
}

export function writePrivate(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * The session folder (0700) and this launch's hook secret in it (0600). Per launch: a resumed
 * session's new secret must not reach the ended agent still shutting down.
 */
export function writeHookSecret(sessionDir: string, secret: string): string {
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const file = join(sessionDir, `hook-secret-${launchTag(secret)}`);
  writePrivate(file, secret);
  return file;
}

/**
 * The shell command of a command hook: `ag hook <event> --url <hookUrl>/<event> --secret-file F`
 * (the secret stays in its file, out of argv). It prints ag's answer, when there is one.
 */
export function forwarderCommand(
  selfCommand: readonly string[],
  hookUrl: string,
  event: string,
  secretFile: string,
): string {
  const url = `${hookUrl.replace(/\/+$/, "")}/${event}`;
  return shellJoin([...selfCommand, "hook", event, "--url", url, "--secret-file", secretFile]);
}

/**
 * `--model <model>` for a session that asks for one: Claude Code, Codex, Gemini CLI and OpenCode
 * all take it under that name (each `--help`); none when the agent's own default is wanted.
 */
export function modelFlag(model: string | null | undefined): string[] {
  return model ? ["--model", model] : [];
}

/** "claude --model 'opus 4'" → ["claude", "--model", "opus 4"]: quotes group, no shell runs it. */
export function splitCommand(command: string): string[] {
  const words: string[] = [];
  let current = "";
  let quote: string | null = null;
  let started = false;
  for (const ch of command) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) words.push(current);
      current = "";
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (started) words.push(current);
  return words;
}

/** Quotes argv for `sh -c` (a command hook runs through a shell). */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ");
}
