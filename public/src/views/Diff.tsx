/** A line diff of what an edit replaces: removed lines, then added ones, in place. */
type Line = { op: " " | "-" | "+"; text: string };

/** Beyond this many lines on a side the diff is not computed: both sides are shown whole. */
const MAX_LINES = 600;

export function diffLines(before: string, after: string): Line[] {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [
      ...a.map((text) => ({ op: "-" as const, text })),
      ...b.map((text) => ({ op: "+" as const, text })),
    ];
  }
  // Longest common subsequence, table from the end.
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const lines: Line[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ op: " ", text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) lines.push({ op: "-", text: a[i++]! });
    else lines.push({ op: "+", text: b[j++]! });
  }
  while (i < a.length) lines.push({ op: "-", text: a[i++]! });
  while (j < b.length) lines.push({ op: "+", text: b[j++]! });
  return lines;
}

export function Diff({ before, after, label }: { before: string; after: string; label: string }) {
  return (
    <pre class="diff" title={label}>
      {diffLines(before, after).map((line, n) => (
        <div key={n} class={line.op === "+" ? "add" : line.op === "-" ? "del" : "same"}>
          <span class="op" aria-hidden="true">
            {line.op}
          </span>
          {line.text || " "}
        </div>
      ))}
    </pre>
  );
}
