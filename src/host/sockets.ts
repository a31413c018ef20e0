import { readdir, readFile, readlink } from "node:fs/promises";
import { readProcesses } from "./procfs.ts";
import { treeOf } from "./tree.ts";

/**
 * Which TCP ports listen on this machine and whether a given process tree owns them, from the
 * kernel's own tables (Linux /proc; elsewhere nothing listens as far as this module knows, which
 * is the safe answer for its callers). Nothing here connects to anything.
 */

/** A listening TCP socket: its local address (IPv4 dotted, IPv6 compressed) and port. */
export interface Listener {
  address: string;
  port: number;
  /** The socket's inode: what a process's fd links to (`socket:[inode]`). */
  inode: number;
}

/** A listener and whether the processes asked about hold it. */
export interface OwnedListener {
  address: string;
  port: number;
  owned: boolean;
}

/** Who counts as the owner: a process tree, and processes elsewhere that carry its mark. */
export interface ListenerOwner {
  /** The root of the tree (an agent's pid); null when it runs no process. */
  root: number | null;
  /**
   * `NAME=value` in a process's environment that makes it the owner's too, wherever it now
   * hangs in the tree: a server an agent started in the background is re-parented to init when
   * the shell that started it exits, but keeps the environment it was started with.
   */
  mark: string;
}

const LISTEN = "0A";

/** Every listening TCP socket of ag's network namespace (/proc/net/tcp and tcp6). */
export async function readListeners(procRoot = "/proc"): Promise<Listener[]> {
  const tables = await Promise.all(
    ["tcp", "tcp6"].map((name) => readFile(`${procRoot}/net/${name}`, "utf8").catch(() => "")),
  );
  return tables.flatMap(parseNetTcp);
}

/** The LISTEN rows of a /proc/net/tcp or tcp6 table. */
export function parseNetTcp(table: string): Listener[] {
  const listeners: Listener[] = [];
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10 || fields[3] !== LISTEN) continue;
    const [hex, portHex] = fields[1]!.split(":");
    const address = hex ? decodeAddress(hex) : null;
    const inode = Number(fields[9]);
    if (address === null || !portHex || !Number.isInteger(inode) || inode <= 0) continue;
    listeners.push({ address, port: Number.parseInt(portHex, 16), inode });
  }
  return listeners;
}

/**
 * The kernel writes an address as 32-bit words in host byte order: on the little-endian machines
 * ag runs on, each word's bytes reversed.
 */
export function decodeAddress(hex: string): string | null {
  if (!/^[0-9A-Fa-f]+$/.test(hex) || (hex.length !== 8 && hex.length !== 32)) return null;
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8)
    for (let at = 6; at >= 0; at -= 2) bytes.push(Number.parseInt(hex.slice(word + at, word + at + 2), 16));
  if (bytes.length === 4) return bytes.join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  // The mapped form of an IPv4 address (an IPv4 connection to a dual-stack socket's peer).
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff")
    return `::ffff:${bytes.slice(12).join(".")}`;
  return compressV6(groups);
}

/** RFC 5952: the longest run of two or more zero groups becomes `::`. */
function compressV6(groups: string[]): string {
  let best = { at: -1, length: 0 };
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let end = i;
    while (end < groups.length && groups[end] === "0") end++;
    if (end - i > best.length && end - i > 1) best = { at: i, length: end - i };
    i = end;
  }
  if (best.at < 0) return groups.join(":");
  const head = groups.slice(0, best.at).join(":");
  const tail = groups.slice(best.at + best.length).join(":");
  return `${head}::${tail}`;
}

/**
 * Every listener, each marked owned when a process of the owner's tree, or one carrying its
 * mark, holds it. Processes ag may not look into (another user's) own nothing.
 */
export async function listenersOf(owner: ListenerOwner, procRoot = "/proc"): Promise<OwnedListener[]> {
  const listeners = await readListeners(procRoot);
  if (listeners.length === 0) return [];
  const processes = await readProcesses(procRoot);
  const tree = owner.root === null ? [] : treeOf(processes)(owner.root).map((p) => p.pid);
  const inTree = new Set(tree);
  const marked = await Promise.all(
    processes
      .filter((p) => !inTree.has(p.pid))
      .map(async (p) => ((await carriesMark(procRoot, p.pid, owner.mark)) ? p.pid : null)),
  );
  const members = [...tree, ...marked.filter((pid): pid is number => pid !== null)];
  const held = new Set((await Promise.all(members.map((pid) => socketInodes(procRoot, pid)))).flat());
  return listeners.map((l) => ({ address: l.address, port: l.port, owned: held.has(l.inode) }));
}

async function carriesMark(procRoot: string, pid: number, mark: string): Promise<boolean> {
  const environ = await readFile(`${procRoot}/${pid}/environ`, "latin1").catch(() => "");
  return environ.split("\0").includes(mark);
}

/** The inodes of the sockets a process has open. */
async function socketInodes(procRoot: string, pid: number): Promise<number[]> {
  const dir = `${procRoot}/${pid}/fd`;
  const fds = await readdir(dir).catch(() => [] as string[]);
  const links = await Promise.all(fds.map((fd) => readlink(`${dir}/${fd}`).catch(() => "")));
  return links.flatMap((link) => {
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    return inode ? [Number(inode)] : [];
  });
}
