/**
 * Whether a process (its argv) is a run of an agent's CLI: a program of one of its names (the
 * native binary, npm's bin link), or node / bun running the npm package's script (node's own
 * options before it skipped). A shell that merely mentions the CLI is neither.
 */
export function isCliProcess(
  argv: readonly string[],
  names: string | readonly string[],
  script: RegExp,
): boolean {
  const [program = "", ...rest] = argv;
  const name = program.split("/").at(-1) ?? "";
  if (typeof names === "string" ? name === names : names.includes(name)) return true;
  if (!/^node(js)?$|^bun$/.test(name)) return false;
  return script.test(rest.find((arg) => !arg.startsWith("-")) ?? "");
}
