import { createHash } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";

/** What every agent's launch does with its files and its command line. */

/** Names one launch's files: a short digest of its secret (never the secret itself). */
export function launchTag(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 12);
}

/** A file only its owner may read (0600, also when it was there before). */
export function writePrivate(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
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

/** Quotes argv for `sh -c` (the command hook runs through a shell). */
export function shellJoin(argv: string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ");
}

/**
 * The shell command of a command hook: `ag hook <event>` (this very program), which forwards the
 * payload on its stdin to `${hookUrl}/<event>` with the secret read from `secretFile`.
 */
export function hookForwarder(selfCommand: string[], hookUrl: string, secretFile: string) {
  return (event: string) =>
    shellJoin([...selfCommand, "hook", event, "--url", `${hookUrl}/${event}`, "--secret-file", secretFile]);
}
