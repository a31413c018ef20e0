/**
 * Whether a process (its argv) is a run of an agent's CLI: its program of that name (the native
 * binary), or node / bun running the npm package's script. A shell that merely mentions the CLI
 * is neither.
 */
export function isCliProcess(argv: readonly string[], command: string, script: RegExp): boolean {
  const [program = "", first = ""] = argv;
  const name = program.split("/").at(-1) ?? "";
  if (name === command) return true;
  return /^node(js)?$|^bun$/.test(name) && script.test(first);
}
