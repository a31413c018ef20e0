import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { atRunEnd, atRunEndStop } from "./cleanup.ts";

/**
 * A real PostgreSQL server of the test's own: initdb into a temp folder, a free port on
 * 127.0.0.1, its unix socket in that folder, run as `nobody` when the tests run as root (initdb
 * and postgres refuse root), stopped and removed when the run ends. Debian's binaries, from
 * /usr/lib/postgresql/<version>/bin (.ci/run and the preflight install `postgresql` when missing).
 */

const POSTGRES_LIB = "/usr/lib/postgresql";
/** nobody:nogroup on Debian. */
const NOBODY = 65534;
const READY_MS = 15_000;

/** The newest installed server's bin folder, or null. */
export function postgresBinDir(root = POSTGRES_LIB): string | null {
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

export interface TestPostgres {
  /** The server's own database URL (user `ag`, trust on 127.0.0.1). */
  url: string;
  port: number;
  /** Its folder (data and socket): removed at the run's end, or by a script that used it. */
  dir: string;
  /** A fresh database of its own for one test, and its URL. */
  database(name: string): Promise<string>;
  /** Stops the server (fast shutdown), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
}

/** As whom the server runs: nobody under root, the current user otherwise. */
function asServerUser(argv: string[]): string[] {
  if (process.getuid?.() !== 0) return argv;
  return ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...argv];
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      `PostgreSQL is not installed (no ${POSTGRES_LIB}/*/bin/initdb): apt-get install postgresql`,
    );
  const dir = mkdtempSync(join(tmpdir(), "ag-pg-"));
  atRunEnd(() => rmSync(dir, { recursive: true, force: true }));
  if (process.getuid?.() === 0) chownSync(dir, NOBODY, NOBODY);
  const data = join(dir, "data");
  const init = Bun.spawnSync(
    asServerUser([join(bin, "initdb"), "-D", data, "-U", "ag", "--auth=trust", "-E", "UTF8", "--no-sync"]),
    { cwd: dir, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", LANG: "C.UTF-8" } },
  );
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  const port = await freePort();
  const url = `postgres://ag@127.0.0.1:${port}/postgres`;
  let server: Subprocess | null = null;

  async function start(): Promise<void> {
    server = Bun.spawn(
      asServerUser([
        join(bin!, "postgres"),
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
      ]),
      {
        cwd: dir,
        stdout: "ignore",
        stderr: "ignore",
        env: { PATH: process.env.PATH ?? "", LANG: "C.UTF-8" },
      },
    );
    await ready();
  }

  async function ready(): Promise<void> {
    const deadline = Date.now() + READY_MS;
    for (;;) {
      const sql = new SQL({ url, max: 1, connectionTimeout: 1 });
      try {
        await sql`SELECT 1`;
        return;
      } catch (error) {
        if (Date.now() > deadline || server?.exitCode !== null)
          throw new Error(`PostgreSQL did not start on port ${port}: ${(error as Error).message}`);
        await Bun.sleep(50);
      } finally {
        await sql.close();
      }
    }
  }

  async function stop(): Promise<void> {
    const running = server;
    server = null;
    if (!running || running.exitCode !== null) return;
    running.kill("SIGINT"); // fast shutdown: ends the clients' connections, keeps the data
    await running.exited;
  }

  await start();
  atRunEndStop(stop);
  return {
    url,
    port,
    dir,
    async database(name) {
      const admin = new SQL({ url, max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
      } finally {
        await admin.close();
      }
      return `postgres://ag@127.0.0.1:${port}/${name}`;
    },
    stop,
    start,
  };
}
