import { afterAll, describe, expect, test } from "bun:test";
import { listenersOf } from "../../src/host/index.ts";
import { decodeAddress, parseNetTcp } from "../../src/host/sockets.ts";

/** Which ports listen and whose they are (host/sockets.ts): the kernel's tables, real processes. */

describe("the kernel's socket tables", () => {
  test("addresses are 32-bit words in host byte order: IPv4, IPv6, mapped IPv4", () => {
    expect(decodeAddress("0100007F")).toBe("127.0.0.1");
    expect(decodeAddress("00000000")).toBe("0.0.0.0");
    expect(decodeAddress("00000000000000000000000001000000")).toBe("::1");
    expect(decodeAddress("00000000000000000000000000000000")).toBe("::");
    expect(decodeAddress("0000000000000000FFFF00000100007F")).toBe("::ffff:127.0.0.1");
    expect(decodeAddress("000080FE000000000000000001000000")).toBe("fe80::1");
    expect(decodeAddress("B80D0120000000000000000001000000")).toBe("2001:db8::1");
    expect(decodeAddress("xyz")).toBeNull();
  });

  test("only LISTEN rows, with port and inode", () => {
    const table = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:88E9 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 73401 1 0 100 0 0 10 0",
      "   1: 0100007F:88E9 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 73999 1 0 100 0 0 10 0",
      "   2: 00000000:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0 100 0 0 10 0",
      "",
    ].join("\n");
    expect(parseNetTcp(table)).toEqual([
      { address: "127.0.0.1", port: 0x88e9, inode: 73401 },
      { address: "0.0.0.0", port: 3000, inode: 555 },
    ]);
  });
});

const SERVE =
  "const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('x') }); console.log(process.pid, s.port);";

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.trim();
}

describe("whose a listener is", () => {
  const started: number[] = [];
  afterAll(() => {
    for (const pid of started) process.kill(pid, "SIGKILL");
  });

  /** A shell (the agent) whose child serves, and a server started elsewhere with the session's mark. */
  async function agentServing(env: Record<string, string> = {}) {
    const agent = Bun.spawn(["bash", "-c", `${process.execPath} -e "${SERVE}" & wait`], {
      stdout: "pipe",
      env: { ...process.env, ...env },
    });
    const [server, port] = (await firstLine(agent.stdout)).split(" ").map(Number);
    started.push(server!, agent.pid);
    return { pid: agent.pid, port: port! };
  }

  test("a port a child of the root listens on is the tree's; another tree's is not", async () => {
    const agent = await agentServing();
    const other = await agentServing();
    const seen = await listenersOf({ root: agent.pid, mark: "SVC_SESSION_ID=none" });
    expect(seen).toContainEqual({ address: "127.0.0.1", port: agent.port, owned: true });
    expect(seen).toContainEqual({ address: "127.0.0.1", port: other.port, owned: false });
  });

  test("a server outside the tree is the session's when it carries the session's mark", async () => {
    const marked = await agentServing({ SVC_SESSION_ID: "s-42" });
    const mine = await listenersOf({ root: null, mark: "SVC_SESSION_ID=s-42" });
    expect(mine).toContainEqual({ address: "127.0.0.1", port: marked.port, owned: true });
    const theirs = await listenersOf({ root: null, mark: "SVC_SESSION_ID=s-43" });
    expect(theirs).toContainEqual({ address: "127.0.0.1", port: marked.port, owned: false });
  });

  test("no /proc: nothing listens as far as anyone can tell", async () => {
    expect(await listenersOf({ root: 1, mark: "X=1" }, "/nonexistent-proc")).toEqual([]);
  });
});
