import type { CriterionAssessment } from "./consensus.ts";

/**
 * The form a reviewer answers in (CONTRACT §7): one line per criterion, in order, PASS or FAIL
 * with a note, then the verdict. Read strictly: an answer that does not say every criterion and
 * the verdict is not read at all (never guessed), and the reviewer is asked once to restate it.
 */

export interface ReadAnswer {
  verdict: "approve" | "reject";
  criteria: CriterionAssessment[];
}

export type AnswerReading = { ok: true; answer: ReadAnswer } | { ok: false; reason: string };

/** The lines a reviewer must end its answer with, for `count` criteria. */
export function answerForm(count: number): string {
  const lines = Array.from(
    { length: count },
    (_, i) => `CRITERION ${i + 1}: PASS or FAIL — one line saying why`,
  );
  return [...lines, "VERDICT: APPROVE or REJECT"].join("\n");
}

/** Markdown a model may wrap the lines in: bullets, quotes, headings, emphasis, code ticks. */
function plain(line: string): string {
  return line
    .replace(/[*_`]/g, "")
    .replace(/^[\s>#\-+•]+/, "")
    .trim();
}

/** `CRITERION 1: PASS — note`, `1. FAIL note`, `Criterion 2 (its text): PASS`… */
const CRITERION_LINE =
  /^(?:criterion|criteria|c)?\s*#?\s*(\d{1,2})\s*(?:\([^)]*\)|"[^"]*")?\s*[:.)\]]?\s*[-–—:]?\s*(pass|fail)\b[\s:\-–—.]*(.*)$/i;
const VERDICT_LINE = /^(?:final\s+|overall\s+)?verdict\s*[:\-–—]?\s*(approve|reject)\b/i;

/** Reads an answer against the criteria; the last line naming a criterion or the verdict counts. */
export function readAnswer(text: string, criteria: readonly string[]): AnswerReading {
  const found = new Map<number, { pass: boolean; note: string }>();
  let verdict: ReadAnswer["verdict"] | null = null;
  for (const raw of text.split("\n")) {
    const line = plain(raw);
    const v = VERDICT_LINE.exec(line);
    if (v) {
      verdict = v[1]!.toLowerCase() === "approve" ? "approve" : "reject";
      continue;
    }
    const c = CRITERION_LINE.exec(line);
    if (!c) continue;
    const index = Number(c[1]);
    if (index < 1 || index > criteria.length) continue;
    found.set(index, { pass: c[2]!.toLowerCase() === "pass", note: c[3]!.trim() });
  }
  const missing = criteria.map((_, i) => i + 1).filter((i) => !found.has(i));
  if (missing.length) {
    const which = missing.map((i) => `CRITERION ${i}`).join(", ");
    return { ok: false, reason: `no PASS or FAIL for ${which}` };
  }
  if (!verdict) return { ok: false, reason: "no VERDICT: APPROVE or REJECT line" };
  return {
    ok: true,
    answer: {
      verdict,
      criteria: criteria.map((criterion, i) => ({ criterion, ...found.get(i + 1)! })),
    },
  };
}
