import type { ArgDef, ArgsDef } from "citty";
import { GLOBAL_ARGS } from "./args.ts";

/**
 * `--help` text, and what to say for a mistyped command. citty's own usage right-aligns the flag
 * column and repeats `--stream` beside `--no-stream`; here every column is left-aligned, and one
 * width runs through a whole page so that descriptions line up section after section.
 */

export interface HelpEntry {
  name: string;
  description: string;
}

export interface CommandGroup {
  title: string;
  commands: HelpEntry[];
}

interface Row {
  left: string;
  right: string;
}

/** Rows under titles, with the right-hand column aligned across all sections. */
function sections(parts: ReadonlyArray<{ title: string; rows: Row[] }>): string[] {
  const shown = parts.filter((p) => p.rows.length > 0);
  const width = Math.max(0, ...shown.flatMap((p) => p.rows.map((r) => r.left.length)));
  return shown.flatMap((p) => [
    "",
    p.title,
    ...p.rows.map((r) => `  ${r.left.padEnd(width)}  ${r.right}`.trimEnd()),
  ]);
}

/** How one flag is written: `-r, --read-only`, `--port <number>`, `--no-stream` for a default-on switch. */
function flagRow(name: string, def: ArgDef): Row {
  const long = name.length === 1 ? `-${name}` : `--${name}`;
  const aliases = ("alias" in def && def.alias ? [def.alias].flat() : []).map((a) =>
    a.length === 1 ? `-${a}` : `--${a}`,
  );
  if (def.type === "boolean" && def.default === true) {
    return { left: `--no-${name}`, right: def.negativeDescription ?? `Turn off: ${def.description ?? ""}` };
  }
  const value = def.type === "string" || def.type === "enum" ? ` <${def.valueHint ?? "value"}>` : "";
  return { left: [...aliases, long].join(", ") + value, right: def.description ?? "" };
}

/** The help of one command: what it does, its usage line, its arguments, its own flags, then the common ones. */
export function renderCommandHelp(
  name: string | undefined,
  meta: { description?: string },
  args: ArgsDef,
): string {
  const entries = Object.entries(args);
  const positionals = entries.filter(([, d]) => d.type === "positional");
  const own = entries.filter(([n, d]) => d.type !== "positional" && !(n in GLOBAL_ARGS));
  const common = entries.filter(([n]) => n in GLOBAL_ARGS);
  const usage = [
    "ag",
    ...(name ? [name] : []),
    ...positionals.map(([n, d]) => {
      const hint = `<${(d as { valueHint?: string }).valueHint ?? n}>`;
      return d.required === false ? `[${hint}]` : hint;
    }),
    "[options]",
  ].join(" ");
  const lines = [
    meta.description ?? "",
    "",
    "USAGE",
    `  ${usage}`,
    ...sections([
      {
        title: "ARGUMENTS",
        rows: positionals.map(([n, d]) => ({
          left: `<${(d as { valueHint?: string }).valueHint ?? n}>`,
          right: d.description ?? "",
        })),
      },
      { title: "OPTIONS", rows: own.map(([n, d]) => flagRow(n, d)) },
      {
        title: "COMMON OPTIONS",
        rows: [...common.map(([n, d]) => flagRow(n, d)), { left: "-h, --help", right: "This help" }],
      },
    ]),
  ];
  return lines.join("\n");
}

/** `ag --help`: the server's own flags and every command, in groups. */
export function renderRootHelp(
  version: string,
  serverArgs: ArgsDef,
  groups: readonly CommandGroup[],
): string {
  const flags = Object.entries(serverArgs).map(([n, d]) => flagRow(n, d));
  return [
    `ag ${version} — runs coding agents in tmux and drives them: REST API, dashboard, this CLI`,
    "",
    "USAGE",
    "  ag [options]                 start the server",
    "  ag <command> [arguments]     talk to it",
    ...sections([
      ...groups.map((g) => ({
        title: g.title,
        rows: g.commands.map((c) => ({ left: c.name, right: c.description })),
      })),
      {
        title: "OPTIONS",
        rows: [
          ...flags,
          { left: "-h, --help", right: "This help" },
          { left: "-v, --version", right: "The version" },
        ],
      },
    ]),
    "",
    "A session is named by its id, a unique start of the id, or its name.",
    "ag <command> --help tells more about a command.",
  ].join("\n");
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps). */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known name closest to a mistyped one, if one is close enough to be what was meant: a
 * start of exactly one name (`lis` → `list`), or within a third of its length in edits (at
 * least one), the nearest winning.
 */
export function nearest(given: string, known: readonly string[]): string | null {
  const typed = given.toLowerCase();
  const starting = known.filter((k) => k.startsWith(typed));
  if (typed.length >= 2 && starting.length === 1) return starting[0]!;
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const distance = editDistance(typed, name);
    const allowed = Math.max(1, Math.floor(name.length / 3));
    if (distance <= allowed && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}
