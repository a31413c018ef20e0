/**
 * Secrets in conversation text, found so a search result never shows them: provider API keys and
 * tokens by their well-known shapes, bearer tokens, and the value of any `NAME=value` / `"name":
 * "value"` whose name says key, token, secret or password (.env files, JSON configs, shell lines).
 */

export const REDACTED = "[redacted]";

/** Shapes of credentials that are secrets wherever they stand (the whole match is the secret). */
const SECRET_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI, Anthropic (sk-ant-…)
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bagk_[A-Za-z0-9_-]{16,}/g, // ag's own API keys
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** `Bearer <token>`: the token is the secret. */
const BEARER = /\b(?:Bearer|Basic|token)\s+([A-Za-z0-9._~+/-]{16,}=*)/gi;

/** An assignment to a secret-sounding name: the value is the secret. */
const ASSIGNMENT =
  /\b[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|token|secret|passw(?:or)?d|pwd|credentials?|private[_-]?key)[A-Za-z0-9_]*["']?\s*[:=]\s*["']?([^\s"',;}{)]{6,})/gi;

/** The [start, end) ranges of `text` that are secrets, sorted and merged. */
export function secretRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const shape of SECRET_SHAPES)
    for (const m of text.matchAll(shape)) ranges.push([m.index, m.index + m[0].length]);
  for (const pattern of [BEARER, ASSIGNMENT])
    for (const m of text.matchAll(pattern)) {
      const value = m[1]!;
      const start = m.index + m[0].length - value.length;
      ranges.push([start, start + value.length]);
    }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push([...range]);
  }
  return merged;
}

/** `text` with every secret replaced by [redacted]. */
export function redact(text: string): string {
  let out = "";
  let at = 0;
  for (const [start, end] of secretRanges(text)) {
    out += text.slice(at, start) + REDACTED;
    at = end;
  }
  return out + text.slice(at);
}
