import { mock } from "bun:test";
import childProcess from "node:child_process";
import net from "node:net";
import { sep } from "node:path";

/**
 * A unit test spawns nothing and listens on nothing: no agent CLI, no tmux, no `bun src/main.ts`,
 * no git, no server on a port (docs/testing.md). tests/setup.ts (preloaded for every `bun test`
 * run) installs this guard: while the file being run (`Bun.main`, one per file, also under
 * `--parallel`) is under tests/unit/, starting a process or a server throws and says where such a
 * test belongs. Files of the other layers (contract, integration, e2e) call through unchanged.
 * The suites run `--parallel` (scripts/test.ts, package.json), each file in a fresh global; in
 * one process for several files, work an integration file left running would be blamed on the
 * unit file after it.
 */
const UNIT_DIR = `${sep}tests${sep}unit${sep}`;

let exempt = false;

export const inUnitFile = (): boolean => !exempt && Bun.main.includes(UNIT_DIR);

/**
 * Runs `fn` with the guard off: the run's cleanups (tests/setup.ts), which end what every file of
 * a run made (tmux servers of integration files too) whichever file happens to end the run.
 */
export function unguarded<T>(fn: () => T): T {
  exempt = true;
  let result: T;
  try {
    result = fn();
  } catch (error) {
    exempt = false;
    throw error;
  }
  // An async fn is exempt until it settles, not only for its first synchronous part.
  if (result instanceof Promise) return result.finally(() => (exempt = false)) as T;
  exempt = false;
  return result;
}

export class UnitSpawnError extends Error {
  constructor(what: string) {
    super(
      `${what} in a unit test (${Bun.main}): unit tests spawn no process and open no port. ` +
        "A test that needs a real process, tmux or server belongs in tests/integration (docs/testing.md).",
    );
    this.name = "UnitSpawnError";
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the guarded functions keep their own signatures
type Fn = (...args: any[]) => any;

/**
 * Each refused call, with its file: tests/setup.ts fails the run on any, also when the code
 * under test caught the error (a fallback taken silently would pass for a test of it).
 */
export const unitSpawns: string[] = [];

function guarded<T extends Fn>(what: string, original: T): T {
  return function (this: unknown, ...args: Parameters<T>) {
    if (inUnitFile()) {
      const error = new UnitSpawnError(what);
      unitSpawns.push(`${Bun.main}: ${what}(${describe(args[0])})`);
      throw error;
    }
    return original.apply(this, args);
  } as T;
}

/** The command or address a refused call was given, for the report. */
function describe(first: unknown): string {
  if (Array.isArray(first)) return first.join(" ").slice(0, 120);
  if (typeof first === "string") return first.slice(0, 120);
  if (first && typeof first === "object" && "cmd" in first) return describe((first as { cmd: unknown }).cmd);
  return first && typeof first === "object" ? "{…}" : String(first);
}

let installed = false;

export function installUnitGuard(): void {
  if (installed) return;
  installed = true;
  const bun = Bun as unknown as Record<string, Fn>;
  for (const name of ["spawn", "spawnSync", "serve", "listen", "connect"] as const) {
    const original = bun[name];
    if (original) bun[name] = guarded(`Bun.${name}`, original.bind(Bun));
  }
  guardModule("child_process", childProcess, [
    "spawn",
    "spawnSync",
    "exec",
    "execSync",
    "execFile",
    "execFileSync",
    "fork",
  ]);
  guardModule("net", net, ["createServer", "connect", "createConnection"]);
}

/** `node:<name>` with `names` guarded, for default and named imports alike (bun:test's mock.module). */
function guardModule(name: string, original: object, names: string[]): void {
  const functions = original as Record<string, Fn>;
  const replaced = Object.fromEntries(
    names.filter((n) => functions[n]).map((n) => [n, guarded(`${name}.${n}`, functions[n]!)]),
  );
  const module = { ...functions, ...replaced };
  mock.module(`node:${name}`, () => ({ ...module, default: module }));
  mock.module(name, () => ({ ...module, default: module }));
}
