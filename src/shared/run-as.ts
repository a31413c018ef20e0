import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AgError } from "./errors.ts";

/**
 * Agents of a tenant under their own OS user (`tenantWorkdirs.<tenant>.runAs`): the one place
 * that knows how ag, running as root, starts a program as another user, and what that user must
 * be able to reach. Every launch path uses it — a terminal agent's window command, a headless
 * agent's child, a verification step, ag's git in a user's folder — so none has a copy.
 *
 * The switch is `setpriv --reuid --regid --init-groups --` (util-linux): ids on argv, never a
 * secret; no PAM session, no login shell, the environment exactly the one ag declares (with the
 * user's HOME, USER and LOGNAME). docs/security.md, "Keeping tenants apart".
 */

/** Who a tenant's agents run as. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
  /** Supplementary groups (what `--init-groups` gives the process). */
  groups: number[];
  home: string;
  /** setpriv's path, found when the tenant was checked. */
  setpriv: string;
}

/** The OS user of a session's tenant, or null: the session runs as ag itself. */
export type TenantUsers = (tenantId: string | null | undefined) => RunAs | null;

/** What nobody is switched to: a tenant with no runAs. */
export const NO_TENANT_USERS: TenantUsers = () => null;

/** CAP_CHOWN, CAP_DAC_READ_SEARCH, CAP_SETGID, CAP_SETUID (linux/capability.h). */
const NEEDED_CAPS: ReadonlyArray<readonly [number, string]> = [
  [0, "CAP_CHOWN"],
  [2, "CAP_DAC_READ_SEARCH"],
  [6, "CAP_SETGID"],
  [7, "CAP_SETUID"],
];

/**
 * Why ag cannot switch users, or null when it can: it must be root with the capabilities to
 * switch (setuid, setgid), to hand the user its session files (chown) and to read what the
 * user's agents write (its transcripts). `status`: /proc/self/status.
 */
export function cannotSwitchUsers(uid: number, status: string): string | null {
  if (uid !== 0) return `ag runs as uid ${uid}, not root`;
  const hex = /^CapEff:\s*([0-9a-f]+)$/im.exec(status)?.[1];
  if (hex === undefined) return "its capabilities cannot be read (/proc/self/status has no CapEff)";
  const effective = BigInt(`0x${hex}`);
  const missing = NEEDED_CAPS.filter(([bit]) => (effective & (1n << BigInt(bit))) === 0n).map(([, n]) => n);
  return missing.length ? `ag runs as root without ${missing.join(", ")}` : null;
}

/** The user named `name` (the system's user database, through getent), or null. */
export function lookupUser(name: string): Omit<RunAs, "setpriv"> | null {
  if (!/^[a-z_][a-z0-9_.-]*\$?$/i.test(name)) return null;
  const passwd = Bun.spawnSync(["getent", "passwd", name], { stdout: "pipe", stderr: "ignore" });
  const fields = passwd.exitCode === 0 ? passwd.stdout.toString().trim().split(":") : [];
  if (fields.length < 7 || fields[0] !== name) return null;
  const [uid, gid] = [Number(fields[2]), Number(fields[3])];
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return null;
  const id = Bun.spawnSync(["id", "-G", name], { stdout: "pipe", stderr: "ignore" });
  const groups = id.stdout.toString().trim().split(/\s+/).map(Number).filter(Number.isInteger);
  return { name, uid, gid, groups: groups.length ? groups : [gid], home: fields[5] ?? "/" };
}

/**
 * The first folder on the way to `path` (the folders above it; the path itself too when
 * `self`) that `user` cannot pass (no x bit for it by owner, group or others), or null. Mode
 * bits only: an ACL that opens more is not seen (the check is then stricter than the system).
 */
export function closedTo(user: Pick<RunAs, "uid" | "groups">, path: string, self = false): string | null {
  const absolute = resolve(path);
  const dirs: string[] = [];
  for (let dir = self ? absolute : dirname(absolute); ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of dirs) {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(dir);
    } catch {
      return dir;
    }
    if (!permits(user, stat, 0o1)) return dir;
  }
  return null;
}

/** Whether `user` has `bit` (4 read, 2 write, 1 execute) on a file of this owner and mode. */
export function permits(
  user: Pick<RunAs, "uid" | "groups">,
  stat: { uid: number; gid: number; mode: number },
  bit: number,
): boolean {
  if (stat.uid === user.uid) return (stat.mode & (bit << 6)) !== 0;
  if (user.groups.includes(stat.gid)) return (stat.mode & (bit << 3)) !== 0;
  return (stat.mode & bit) !== 0;
}

/**
 * A program started as `user` (null: as ag, unchanged): argv behind setpriv, and the environment
 * with the user's HOME, USER and LOGNAME. The program (found on the environment's PATH) must be
 * reachable and executable by the user, else AGENT_UNAVAILABLE says which folder is closed to it.
 */
export function asUser(
  user: RunAs | null,
  command: readonly string[],
  env: Record<string, string>,
): { command: string[]; env: Record<string, string> } {
  if (!user) return { command: [...command], env };
  const program = command[0] ?? "";
  const found = program.includes("/") ? resolve(program) : Bun.which(program, { PATH: env.PATH ?? "" });
  if (found) assertUsable(user, found, "run");
  return {
    command: [user.setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", ...command],
    env: { ...env, HOME: user.home, USER: user.name, LOGNAME: user.name },
  };
}

/**
 * Throws AGENT_UNAVAILABLE unless `user` can reach and execute (or read) `path` — both the path
 * as named and, for a link, where it leads.
 */
export function assertUsable(user: RunAs, path: string, what: "run" | "read"): void {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // reported below as not found
  }
  for (const each of new Set([path, real])) {
    const why = unusable(user, each, what === "run" ? 0o1 : 0o4);
    if (why)
      throw new AgError(
        "AGENT_UNAVAILABLE",
        `user ${user.name} (runAs) cannot ${what} ${each}: ${why}; install it where that user can ${what} it (docs/security.md)`,
      );
  }
}

function unusable(user: RunAs, path: string, bit: number): string | null {
  const closed = closedTo(user, path);
  if (closed) return `the folder ${closed} is closed to it`;
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    return "it does not exist";
  }
  return permits(user, stat, bit)
    ? null
    : `its mode is ${(stat.mode & 0o7777).toString(8)} (owner uid ${stat.uid})`;
}

/**
 * Hands a session's private folder to the user its agent runs as. The folder stays ag's (root,
 * mode 0710, group the user's: the user may enter, not add, rename or replace), so a file ag
 * writes there later can never be a link the agent planted; what is in it — the launch's files
 * the agent must read (hook settings, hook secret, MCP config holding its key) and folders the
 * agent writes in — becomes the user's, modes kept (0600 / 0700): no other user reads them. `keep`:
 * ag's own files there (a headless session's transcript), left root's and unreadable to it.
 */
export function handOver(user: RunAs, dir: string, keep: readonly string[] = []): void {
  chownSync(dir, 0, user.gid);
  chmodSync(dir, 0o710);
  for (const entry of readdirSync(dir)) if (!keep.includes(entry)) ownTree(join(dir, entry), user);
}

/**
 * Before a launch writes a session's files again (resume, reopen): the folders an earlier launch
 * handed to the user are removed (each launch makes its own again), as links its agent may have
 * planted in them would turn ag's writes there onto any file. Files at the top stay: the folder
 * is ag's, so none of them can have been replaced by a link.
 */
export function reclaim(user: RunAs, dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = lstatSync(path);
    if (stat.uid === user.uid && !stat.isFile()) rmSync(path, { recursive: true, force: true });
  }
}

function ownTree(path: string, user: RunAs): void {
  const stat = lstatSync(path);
  lchownSync(path, user.uid, user.gid);
  if (stat.isDirectory()) for (const entry of readdirSync(path)) ownTree(join(path, entry), user);
}

/**
 * Checks every tenant's runAs and answers who each tenant's agents run as. Refuses (CONFIG_INVALID,
 * naming the tenant) a user that does not exist or is root, an ag that cannot switch users,
 * a missing setpriv, and a user that could not reach what its agents need: ag's state folder
 * (their session files are under it), ag's own program (their hooks run `ag hook`), and its
 * tenant's root, which must be the user's own.
 */
export function tenantUsers(
  tenants: Record<string, { root: string; runAs?: string }>,
  needs: { stateDir: string; selfCommand: readonly string[]; path?: string },
): TenantUsers {
  const users = new Map<string, RunAs>();
  for (const [tenant, rule] of Object.entries(tenants)) {
    if (rule.runAs === undefined) continue;
    users.set(tenant, checkTenantUser(tenant, rule as { root: string; runAs: string }, needs));
  }
  return users.size === 0 ? NO_TENANT_USERS : (tenantId) => (tenantId ? (users.get(tenantId) ?? null) : null);
}

function checkTenantUser(
  tenant: string,
  rule: { root: string; runAs: string },
  needs: { stateDir: string; selfCommand: readonly string[]; path?: string },
): RunAs {
  const refuse = (why: string) =>
    new AgError(
      "CONFIG_INVALID",
      `tenantWorkdirs.${tenant}.runAs (${rule.runAs}): ${why} (docs/security.md)`,
    );
  const cannot = cannotSwitchUsers(process.getuid?.() ?? -1, readStatus());
  if (cannot) throw refuse(`ag cannot run agents as another user: ${cannot}`);
  const found = lookupUser(rule.runAs);
  if (!found) throw refuse("no such OS user");
  if (found.uid === 0) throw refuse("the user is root: its agents would not be kept apart from ag");
  const setpriv = Bun.which("setpriv", { PATH: needs.path ?? process.env.PATH ?? "" });
  if (!setpriv) throw refuse("setpriv (util-linux) is not on PATH");
  const user: RunAs = { ...found, setpriv };
  // ag makes the state folder (and what is missing above it) passable itself.
  const closed = closedTo(user, nearestExisting(dirname(resolve(needs.stateDir))), true);
  if (closed) throw refuse(`the folder ${closed} above ag's state folder is closed to the user`);
  try {
    for (const [i, part] of needs.selfCommand.entries()) assertUsable(user, part, i === 0 ? "run" : "read");
  } catch (error) {
    throw refuse((error as Error).message);
  }
  if (!existsSync(rule.root)) throw refuse(`the tenant's root ${rule.root} does not exist`);
  const root = statSync(rule.root);
  if (root.uid !== user.uid)
    throw refuse(
      `the tenant's root ${rule.root} belongs to uid ${root.uid}: make it the user's (chown ${rule.runAs}: ${rule.root}; chmod 700 ${rule.root})`,
    );
  const closedRoot = closedTo(user, rule.root, true);
  if (closedRoot)
    throw refuse(`the folder ${closedRoot} on the way to the tenant's root is closed to the user`);
  return user;
}

function nearestExisting(path: string): string {
  return existsSync(path) || dirname(path) === path ? path : nearestExisting(dirname(path));
}

function readStatus(): string {
  try {
    return readFileSync("/proc/self/status", "utf8");
  } catch {
    return "";
  }
}
