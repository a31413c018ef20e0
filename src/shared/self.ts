/** Facts about this very program: whether it runs as the compiled binary, and how to run it again. */

export function isCompiled(): boolean {
  return import.meta.dir.includes("$bunfs") || import.meta.dir.includes("~BUN");
}

/** argv that starts this program again (the binary, or bun + the entry script from source). */
export function selfCommand(): string[] {
  return isCompiled() ? [process.execPath] : [process.execPath, Bun.main];
}
