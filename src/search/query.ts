import { AgError } from "../shared/errors.ts";

/**
 * A user's query as an FTS5 MATCH expression that can never be an FTS5 syntax error: every word
 * and phrase goes in as an FTS5 string (its quotes doubled), so `NEAR`, `:`, `^`, `(`, `-` … are
 * only text. What the user may write:
 * - words: all must match (`flaky test`);
 * - `"a phrase"`: those words in that order;
 * - `pre*`: a word starting with `pre` (a phrase too: `"flaky te"*`);
 * - `OR` (upper case) between two of them: either.
 * An unclosed quote or a query of no words is a SEARCH_QUERY_INVALID.
 */
export function toMatchExpression(query: string): string {
  const terms = tokens(query);
  const parts: string[] = [];
  for (const term of terms) {
    if (term.kind === "or") {
      if (parts.length === 0 || parts.at(-1) === "OR") continue;
      parts.push("OR");
      continue;
    }
    const body = term.text.replaceAll('"', '""');
    if (!hasWord(term.text)) continue;
    parts.push(`"${body}"${term.prefix ? "*" : ""}`);
  }
  while (parts.at(-1) === "OR") parts.pop();
  if (parts.length === 0) throw new AgError("SEARCH_QUERY_INVALID", "the query has no words to search for");
  return parts.join(" ");
}

type Term = { kind: "text"; text: string; prefix: boolean } | { kind: "or" };

function tokens(query: string): Term[] {
  const terms: Term[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      const close = query.indexOf('"', i + 1);
      if (close < 0) throw new AgError("SEARCH_QUERY_INVALID", "a quote opens a phrase that is never closed");
      const prefix = query[close + 1] === "*";
      terms.push({ kind: "text", text: query.slice(i + 1, close), prefix });
      i = close + (prefix ? 2 : 1);
    } else {
      let end = i;
      while (end < query.length && !/\s/.test(query[end]!) && query[end] !== '"') end++;
      const word = query.slice(i, end);
      if (word === "OR") terms.push({ kind: "or" });
      else {
        const prefix = word.endsWith("*");
        terms.push({ kind: "text", text: prefix ? word.replace(/\*+$/, "") : word, prefix });
      }
      i = end;
    }
  }
  return terms;
}

/** FTS5's unicode61 tokenizer keeps letters and digits; a term of neither matches nothing. */
function hasWord(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}
