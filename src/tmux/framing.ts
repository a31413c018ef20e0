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
  /** Feeds decoded stdout; partial lines are kept until their newline arrives. */
  push(chunk: string): void;
}

const BEGIN = /^%begin (\d+) (\d+) (\d+)$/;

/**
 * Splits stdout into replies and notifications. Outside a block every line is a notification.
 * Inside one every line is reply content (a captured pane may show "%end 1 2 1"): only a guard
 * repeating the block's own time, number and flags closes it. A pane printing that exact line,
 * number included, could still end a reply early; the number is tmux's server-wide command
 * counter, which nothing in a pane shows.
 */
export function createControlFramer(handlers: {
  reply(reply: ControlReply): void;
  notification(line: string): void;
}): ControlFramer {
  let partial = "";
  let block: ControlReply | null = null;
  /** The opening guard's `<time> <number> <flags>`: tmux repeats all three on the closing one. */
  let blockKey = "";

  function line(text: string): void {
    if (block === null) {
      const guard = text.startsWith("%begin ") ? BEGIN.exec(text) : null;
      if (guard) {
        block = { number: Number(guard[2]), flags: Number(guard[3]), ok: true, lines: [] };
        blockKey = text.slice("%begin ".length);
      } else if (text !== "") handlers.notification(text);
      return;
    }
    if (text.startsWith("%end ") || text.startsWith("%error ")) {
      const ok = text.startsWith("%end ");
      if (text.slice(ok ? 5 : 7) === blockKey) {
        const done = block;
        done.ok = ok;
        block = null;
        handlers.reply(done);
        return;
      }
    }
    block.lines.push(text);
  }

  return {
    push(chunk) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const part of parts) line(part);
    },
  };
}

export type ControlNotification =
  | { kind: "output"; paneId: string }
  | { kind: "window-close"; windowId: string }
  | { kind: "subscription"; name: string; windowId: string; paneId: string; value: string }
  | { kind: "exit"; reason: string }
  | { kind: "other"; name: string };

/** Reads the notifications the tmux layer acts on; the rest are `other`. */
export function parseNotification(line: string): ControlNotification {
  const space = line.indexOf(" ");
  const name = space === -1 ? line : line.slice(0, space);
  switch (name) {
    case "%output":
    case "%extended-output": {
      const end = line.indexOf(" ", space + 1);
      return { kind: "output", paneId: line.slice(space + 1, end === -1 ? undefined : end) };
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
