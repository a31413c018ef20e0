/**
 * Pure argv building. Every tmux command ag runs goes to its private server (`-L <socket>`),
 * never to the user's default one.
 */
export function tmuxArgv(binary: string, socket: string, ...command: string[]): string[] {
  return [binary, "-L", socket, ...command];
}

/**
 * Tokens tmux's parser reads literally when bare: no quotes, `$`, `~`, `#`, `;`, braces or
 * spaces, and no `%` but in a pane id (a bare `%word` is read as a directive like `%if`).
 */
const BARE = /^(?:[A-Za-z0-9_@=:.,/+-]+|%\d+)$/;

/**
 * Quotes one argument for tmux's command parser (a control-mode line, a config line). Inside
 * double quotes the parser still expands `\`, `$VAR` and a leading `~`, so those are escaped;
 * a newline would end the control-mode line, so it and every other control character travel as
 * escapes. UTF-8 passes through as is. NUL cannot be carried: tmux arguments are C strings.
 */
export function quoteTmuxArg(value: string): string {
  if (value.includes("\0")) throw new TypeError("tmux arguments cannot contain NUL characters");
  if (BARE.test(value)) return value;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
  const escaped = value.replace(/[\\"$~\x00-\x1f\x7f]/g, (ch) => {
    switch (ch) {
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
      case "\\":
      case '"':
      case "$":
      case "~":
        return `\\${ch}`;
      default:
        // tmux's octal escape takes exactly three digits.
        return `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`;
    }
  });
  return `"${escaped}"`;
}

/** One control-mode command line (without the newline) running exactly `args`. */
export function tmuxCommandLine(args: readonly string[]): string {
  if (args.length === 0) throw new TypeError("empty tmux command");
  return args.map(quoteTmuxArg).join(" ");
}

/**
 * Escapes `#` for arguments tmux expands as formats (`new-window -n`, `-c`): a cwd or name
 * containing `#{…}` or `#(…)` must not be evaluated (the latter runs a shell command).
 */
export function escapeTmuxFormat(value: string): string {
  return value.replaceAll("#", "##");
}

/**
 * The argv tmux should exec for a window. tmux runs a single-element command through
 * `sh -c` (word splitting, globbing); wrapping it keeps it a plain exec of that one program.
 */
export function windowCommand(command: readonly string[]): string[] {
  if (command.length === 0) throw new TypeError("a window needs a command");
  if (command.length > 1) return [...command];
  return ["/bin/sh", "-c", 'exec "$0"', command[0]!];
}

export function isPaneId(value: string): boolean {
  return /^%\d+$/.test(value);
}

export function isWindowId(value: string): boolean {
  return /^@\d+$/.test(value);
}

/**
 * A person's terminal attached to ag's tmux server at one pane: `attach-session -t %N` attaches
 * to the pane's tmux session and makes that pane's window the current one. `-r` makes the client
 * read-only (tmux ≥ 3.1: keys reach no pane, only detach works; its size is ignored too).
 */
export function attachArgv(binary: string, socket: string, paneId: string, readOnly: boolean): string[] {
  if (!isPaneId(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
  return tmuxArgv(binary, socket, "attach-session", ...(readOnly ? ["-r"] : []), "-t", paneId);
}
