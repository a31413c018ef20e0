/**
 * Pure parsing of tmux control-mode output (tmux(1) "CONTROL MODE"). Every command answers
 * one block, `%begin <time> <number> <flags>` … `%end|%error <time> <number> <flags>`; between
 * blocks come notifications (`%output`, `%window-close`, …), never inside one.
 */

export interface ControlReply {
  /** tmux's command number: the closing guard carries the same one. */
  number: number;
  /** 1 when the command came from this client's stdin, 0 for the start-up command line. */
  flags: number;
  ok: boolean;
  lines: string[];
}

export interface ControlFramer {
  /** Feeds raw stdout; a partial line is kept until its newline arrives. */
  push(chunk: Uint8Array): void;
}

const BEGIN = /^%begin (\d+) (\d+) (\d+)$/;
const OUTPUT = new TextEncoder().encode("%output ");
const EXTENDED_OUTPUT = new TextEncoder().encode("%extended-output ");
const SPACE = 0x20;
const NEWLINE = 0x0a;
const EMPTY: Uint8Array = new Uint8Array(0);

/**
 * Splits stdout into replies and notifications. Outside a block every line is a notification.
 * Inside one every line is reply content (a captured pane may show "%end 1 2 1"): only a guard
 * repeating the block's own time, number and flags closes it. A pane printing that exact line,
 * number included, could still end a reply early; the number is tmux's server-wide command
 * counter, which nothing in a pane shows.
 *
 * Lines are split as bytes, not text: `%output` carries what a program wrote, which need not be
 * UTF-8 and is cut wherever tmux's read ended (a character's bytes can straddle two notifications).
 * So pane output is handed on still escaped and undecoded (`decodeOutputData` when someone reads
 * it; a busy pane sends ~3,200 a second), and only the other lines are decoded as UTF-8.
 */
export function createControlFramer(handlers: {
  reply(reply: ControlReply): void;
  notification(line: string): void;
  /** `%output` / `%extended-output`: the pane, and its data as tmux escaped it. */
  output(paneId: string, escaped: Uint8Array): void;
}): ControlFramer {
  const text = new TextDecoder();
  /** The start of a line whose newline has not arrived yet (copies: chunks are not ours to keep). */
  let partial: Uint8Array[] = [];
  let block: ControlReply | null = null;
  /** The opening guard's `<time> <number> <flags>`: tmux repeats all three on the closing one. */
  let blockKey = "";

  function line(bytes: Uint8Array): void {
    if (block === null) {
      if (outputLine(bytes)) return;
      const decoded = text.decode(bytes);
      const guard = decoded.startsWith("%begin ") ? BEGIN.exec(decoded) : null;
      if (guard) {
        block = { number: Number(guard[2]), flags: Number(guard[3]), ok: true, lines: [] };
        blockKey = decoded.slice("%begin ".length);
      } else if (decoded !== "") handlers.notification(decoded);
      return;
    }
    const decoded = text.decode(bytes);
    if (decoded.startsWith("%end ") || decoded.startsWith("%error ")) {
      const ok = decoded.startsWith("%end ");
      if (decoded.slice(ok ? 5 : 7) === blockKey) {
        const done = block;
        done.ok = ok;
        block = null;
        handlers.reply(done);
        return;
      }
    }
    block.lines.push(decoded);
  }

  /** `%output %<pane> <data>` or `%extended-output %<pane> <age> … : <data>`. */
  function outputLine(bytes: Uint8Array): boolean {
    const extended = startsWith(bytes, EXTENDED_OUTPUT);
    if (!extended && !startsWith(bytes, OUTPUT)) return false;
    const from = extended ? EXTENDED_OUTPUT.length : OUTPUT.length;
    const space = bytes.indexOf(SPACE, from);
    const paneId = ascii(bytes, from, space === -1 ? bytes.length : space);
    let data = EMPTY;
    if (space !== -1 && !extended) data = bytes.subarray(space + 1);
    else if (space !== -1) {
      const colon = indexOfColon(bytes, space);
      if (colon !== -1) data = bytes.subarray(colon + 3);
    }
    handlers.output(paneId, data);
    return true;
  }

  return {
    push(chunk) {
      let start = 0;
      for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
        const piece = chunk.subarray(start, end);
        if (partial.length === 0) line(piece);
        else {
          partial.push(piece);
          line(Buffer.concat(partial));
          partial = [];
        }
        start = end + 1;
      }
      if (start < chunk.length) partial.push(chunk.slice(start));
    },
  };
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  let out = "";
  for (let i = from; i < to; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}

/** The first " : " at or after `from` (what ends `%extended-output`'s fields). */
function indexOfColon(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(0x3a, from); i !== -1; i = bytes.indexOf(0x3a, i + 1)) {
    if (bytes[i - 1] === SPACE && bytes[i + 1] === SPACE) return i - 1;
  }
  return -1;
}

const BACKSLASH = 0x5c;

/**
 * The bytes a program wrote, from `%output` data: tmux writes every byte below 32, and the
 * backslash, as `\ooo` (three octal digits), everything else as is (UTF-8 or not).
 */
export function decodeOutputData(escaped: Uint8Array): Uint8Array {
  const out = new Uint8Array(escaped.length);
  let n = 0;
  for (let i = 0; i < escaped.length; i++) {
    const byte = escaped[i]!;
    if (byte === BACKSLASH && isOctal(escaped, i + 1)) {
      out[n++] = ((escaped[i + 1]! - 48) << 6) | ((escaped[i + 2]! - 48) << 3) | (escaped[i + 3]! - 48);
      i += 3;
    } else out[n++] = byte;
  }
  return n === out.length ? out : out.slice(0, n);
}

function isOctal(bytes: Uint8Array, at: number): boolean {
  for (let i = at; i < at + 3; i++) {
    const byte = bytes[i];
    if (byte === undefined || byte < 48 || byte > 55) return false;
  }
  return true;
}

export type ControlNotification =
  | { kind: "window-close"; windowId: string }
  | { kind: "layout-change"; windowId: string }
  | { kind: "subscription"; name: string; windowId: string; paneId: string; value: string }
  | { kind: "exit"; reason: string }
  | { kind: "other"; name: string };

/** Reads the notifications the tmux layer acts on (pane output is framed apart); the rest are `other`. */
export function parseNotification(line: string): ControlNotification {
  const space = line.indexOf(" ");
  const name = space === -1 ? line : line.slice(0, space);
  switch (name) {
    case "%layout-change": {
      const end = line.indexOf(" ", space + 1);
      return { kind: "layout-change", windowId: line.slice(space + 1, end === -1 ? undefined : end) };
    }
    case "%window-close":
    case "%unlinked-window-close":
      return { kind: "window-close", windowId: line.slice(space + 1).trim() };
    case "%exit":
      return { kind: "exit", reason: space === -1 ? "" : line.slice(space + 1) };
    case "%subscription-changed":
      return parseSubscription(line) ?? { kind: "other", name };
    default:
      return { kind: "other", name };
  }
}

/** `%subscription-changed <name> $s @w <index> %p [future args…] : <value>` */
function parseSubscription(line: string): ControlNotification | null {
  const colon = line.indexOf(" : ");
  if (colon === -1) return null;
  const [, name, , windowId, , paneId] = line.slice(0, colon).split(" ");
  if (!name || !windowId || !paneId) return null;
  return { kind: "subscription", name, windowId, paneId, value: line.slice(colon + 3) };
}
