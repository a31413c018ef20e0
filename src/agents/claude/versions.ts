import { byVersion } from "../versions.ts";
import { SCREEN_2_1_197, SCREEN_2_1_328, type ScreenDialect } from "./screen.ts";

/**
 * The Claude Code versions ag is verified on (the e2e contract passes on each), and what differs
 * between them. A version between two verified ones behaves as the older of the two as far as ag
 * knows; a newer one as the newest (and is reported unverified).
 */
export const CLAUDE_VERIFIED_VERSIONS = ["2.1.197", "2.1.328", "2.1.332"] as const;

export interface ClaudeDialect {
  screen: ScreenDialect;
  /**
   * The version hands a paste it collapsed into "[Pasted text #N +L lines]" to the model inside a
   * frame of its own (`<pasted_content id="N">…</pasted_content id="N">`), and its prompt hook
   * and transcript record the framed text.
   */
  framesPastes: boolean;
  /**
   * Keys reaching a dialog sooner than this after it opened are dropped (2.1.328: lost at 0 and
   * 100 ms, taken from 300 ms on, measured on its Bash dialog; 2.1.197 takes them at once).
   */
  dialogSettleMs: number;
}

const DIALECTS: ReadonlyArray<{ since: string; value: ClaudeDialect }> = [
  { since: "2.1.197", value: { screen: SCREEN_2_1_197, framesPastes: false, dialogSettleMs: 0 } },
  { since: "2.1.328", value: { screen: SCREEN_2_1_328, framesPastes: true, dialogSettleMs: 400 } },
];

/** The dialect of one version; unknown (null): the newest verified one's. */
export function claudeDialect(version: string | null): ClaudeDialect {
  return byVersion(version, DIALECTS);
}

/**
 * "\n\n<pasted_content id="1222">\n<the text>\n</pasted_content id="1222">\n": Claude Code's frame
 * around a collapsed paste (2.1.328), opening and closing tags with the same id.
 */
const PASTE_FRAME = /\n*<pasted_content id="([^"\n]+)">\n([\s\S]*?)\n?<\/pasted_content id="\1">\n*/g;

/** The text with each of Claude Code's paste frames replaced by the text it holds. */
export function unframePastes(text: string): string {
  return text.replace(PASTE_FRAME, (_, _id: string, inner: string) => inner);
}
