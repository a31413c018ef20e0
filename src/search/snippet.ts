import { REDACTED, secretRanges } from "./redact.ts";
import type { SnippetPart } from "./search.ts";

/** What FTS5's highlight() puts around each matched word (characters no transcript text holds). */
export const HIT_OPEN = "\u0002";
export const HIT_CLOSE = "\u0003";

/** Characters of text a snippet shows around its first match. */
const WINDOW_CHARS = 240;
const ELLIPSIS = "…";

/**
 * A snippet of a whole turn part that FTS5 marked (highlight()): a window around the first match,
 * cut at spaces, with the matches marked and every secret redacted. Redaction runs on the whole
 * text before the window is cut, so a window that starts inside a key cannot show half of it.
 */
export function snippetOf(marked: string, windowChars = WINDOW_CHARS): SnippetPart[] {
  const { text, hits } = unmark(marked);
  const secrets = secretRanges(text);
  const [from, to] = windowAround(text, hits[0]?.[0] ?? 0, windowChars, secrets);
  const parts: SnippetPart[] = [];
  const push = (piece: string, hit: boolean) => {
    if (!piece) return;
    const last = parts.at(-1);
    if (last && last.hit === hit) last.text += piece;
    else parts.push({ text: piece, hit });
  };
  if (from > 0) push(ELLIPSIS, false);
  const cuts = new Set([from, to]);
  for (const [s, e] of [...hits, ...secrets]) for (const at of [s, e]) if (at > from && at < to) cuts.add(at);
  const points = [...cuts].sort((a, b) => a - b);
  for (let i = 0; i + 1 < points.length; i++) {
    const [s, e] = [points[i]!, points[i + 1]!];
    const hit = hits.some(([hs, he]) => hs < e && he > s);
    const secret = secrets.find(([ss, se]) => ss < e && se > s);
    if (!secret) push(text.slice(s, e), hit);
    else if (secret[0] >= s) push(REDACTED, hit); // once per secret, at its first piece
  }
  if (to < text.length) push(ELLIPSIS, false);
  return parts;
}

/** The text without marks, and the [start, end) of each marked match in it. */
function unmark(marked: string): { text: string; hits: Array<[number, number]> } {
  let text = "";
  const hits: Array<[number, number]> = [];
  let open = -1;
  for (const c of marked) {
    if (c === HIT_OPEN) open = text.length;
    else if (c === HIT_CLOSE) {
      if (open >= 0 && text.length > open) hits.push([open, text.length]);
      open = -1;
    } else text += c;
  }
  return { text, hits };
}

/** [from, to) of at most ~`size` characters around `at`, cut at spaces, never inside a secret. */
function windowAround(
  text: string,
  at: number,
  size: number,
  secrets: Array<[number, number]>,
): [number, number] {
  if (text.length <= size) return [0, text.length];
  let from = Math.max(0, Math.min(at - Math.floor(size / 3), text.length - size));
  let to = Math.min(text.length, from + size);
  if (from > 0) {
    const space = text.indexOf(" ", from);
    if (space >= 0 && space < at) from = space + 1;
  }
  if (to < text.length) {
    const space = text.lastIndexOf(" ", to);
    if (space > at) to = space;
  }
  for (const [s, e] of secrets) {
    if (s < from && e > from) from = s;
    if (s < to && e > to) to = e;
  }
  return [from, to];
}
