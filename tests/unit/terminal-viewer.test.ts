import { beforeEach, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import type { AuditInput } from "../../src/audit/index.ts";
import { LOCAL, type Principal } from "../../src/auth/principal.ts";
import type { Scope } from "../../src/auth/scopes.ts";
import { createEventBus, type EventBus } from "../../src/events/bus.ts";
import { AgError } from "../../src/shared/errors.ts";
import { createLogger } from "../../src/shared/log.ts";
import {
  ACCESS_CHECK_MS,
  CLOSE,
  createTerminalService,
  MAX_INPUT_BYTES,
  RATE_WINDOW_MS,
  type TerminalConnection,
  type TerminalService,
} from "../../src/terminal/index.ts";
import type { TmuxPane } from "../../src/tmux/tmux.ts";
import { createManualClock } from "../fakes/clock.ts";
import { createFakeTmux, type FakeTmux } from "../fakes/tmux.ts";
import { sampleInput } from "../helpers/events.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: messages are inspected field by field
type Json = Record<string, any>;

const MIB = 1024 * 1024;

function keyHolder(name: string, scopes: Scope[]): Principal {
  return {
    kind: "key",
    actor: `key:${name}`,
    scopes: new Set(scopes),
    tenantId: null,
    sessionId: null,
    keyId: name,
  };
}

/** The client's side as the viewer sees it: what it was sent, its queue, how it was closed. */
function fakePeer() {
  const sent: Array<Json | string> = [];
  const peer = {
    sent,
    queued: 0,
    closedWith: null as { code: number; reason: string } | null,
    sendText: (text: string) => sent.push(JSON.parse(text)),
    sendBytes: (bytes: Uint8Array) => sent.push(Buffer.from(bytes).toString()),
    buffered: () => peer.queued,
    close: (code: number, reason: string) => {
      peer.closedWith = { code, reason };
    },
    texts: () => sent.filter((m): m is Json => typeof m !== "string"),
    /** The bytes sent since the last snapshot. */
    output: () => {
      const at = sent.findLastIndex((m) => typeof m !== "string" && m.type === "snapshot");
      return sent
        .slice(at + 1)
        .filter((m): m is string => typeof m === "string")
        .join("");
    },
    last: () => peer.texts().at(-1),
  };
  return peer;
}

let fake: FakeTmux;
let bus: EventBus;
let audit: AuditInput[];
let revoked: Set<string>;
let pane: TmuxPane;
let terminals: TerminalService;
/** The holds open viewers keep on their session (it is never hibernated while held). */
let holds: Map<string, number>;

beforeEach(async () => {
  holds = new Map();
  fake = createFakeTmux();
  await fake.start();
  bus = createEventBus();
  audit = [];
  revoked = new Set();
  pane = await fake.newWindow({ tag: "s1", name: "agent", cwd: tmpdir(), command: ["agent"] });
  terminals = service();
});

/**
 * The terminal service over the fake tmux with this file's defaults: every audit record kept,
 * revoked keys ended, one session "s1" in `pane` (while its window lasts).
 */
function service(overrides: Partial<Parameters<typeof createTerminalService>[0]> = {}): TerminalService {
  return createTerminalService({
    tmux: fake,
    bus,
    audit: {
      append(input) {
        audit.push(input);
        return { ...input, id: audit.length, timestamp: "", prevHash: "", hash: "" };
      },
    },
    logger: createLogger({ level: "silent", json: true }),
    current: (principal) => (principal.keyId && revoked.has(principal.keyId) ? null : principal),
    sessions: {
      placement(id) {
        if (id !== "s1" || !fake.window(pane.windowId))
          throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
        return { paneId: pane.paneId, windowId: pane.windowId };
      },
      wake: async (id) => {
        throw new AgError("SESSION_NOT_FOUND", `no session ${id} to wake`);
      },
      hold: (id) => {
        holds.set(id, (holds.get(id) ?? 0) + 1);
        return () => holds.set(id, (holds.get(id) ?? 1) - 1);
      },
    },
    ...overrides,
  });
}

function open(principal: Principal = LOCAL): {
  peer: ReturnType<typeof fakePeer>;
  connection: TerminalConnection;
} {
  const peer = fakePeer();
  const connection = terminals.open("s1", { principal, ip: "127.0.0.1" }, peer);
  return { peer, connection };
}

const snapshotsOf = (peer: ReturnType<typeof fakePeer>) => peer.texts().filter((m) => m.type === "snapshot");

describe("a viewer keeps its session awake", () => {
  test("held from the open to the close, once, whatever else the client sends", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    expect(holds.get("s1")).toBe(1);
    const second = open();
    expect(holds.get("s1")).toBe(2);
    second.connection.closed();
    connection.closed();
    expect(holds.get("s1")).toBe(0);
  });

  test("a session that cannot be shown is not held", () => {
    const peer = fakePeer();
    terminals.open("s2", { principal: LOCAL, ip: "127.0.0.1" }, peer);
    expect(holds.get("s2")).toBeUndefined();
  });
});

describe("what a viewer is sent", () => {
  test("the snapshot first (the screen so far), then the bytes written after it", async () => {
    fake.write(pane.paneId, "before\r\n");
    const { peer } = open();
    await until(() => snapshotsOf(peer).length === 1);
    expect(peer.sent[0]).toMatchObject({ type: "snapshot", cols: 120, rows: 40, cursor: { x: 0, y: 1 } });
    expect((peer.sent[0] as Json).data).toContain("before");
    fake.write(pane.paneId, "after \x1b[1mbold\x1b[0m");
    await until(() => peer.output() === "after \x1b[1mbold\x1b[0m");
    expect(peer.sent).toHaveLength(2);
  });

  test("a client too slow for the output misses bytes, then is repainted once its queue drains", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    peer.queued = 2 * MIB;
    fake.write(pane.paneId, "lost in the backlog");
    await Bun.sleep(5);
    expect(peer.sent).toHaveLength(1);
    // Drained only part of the way: still waiting.
    peer.queued = 0.75 * MIB;
    connection.drained();
    fake.write(pane.paneId, " and this");
    await Bun.sleep(5);
    expect(peer.sent).toHaveLength(1);
    peer.queued = 0;
    connection.drained();
    await until(() => snapshotsOf(peer).length === 2);
    expect(snapshotsOf(peer)[1]!.data).toContain("lost in the backlog and this");
    fake.write(pane.paneId, "!");
    await until(() => peer.output() === "!");
  });

  test("a pane printing faster than anyone reads: past the window's budget, repainted when it ends", async () => {
    const clock = createManualClock();
    const fast = service({ maxBytesPerWindow: 10, clock });
    const peer = fakePeer();
    fast.open("s1", { principal: LOCAL, ip: "127.0.0.1" }, peer);
    await until(() => snapshotsOf(peer).length === 1);
    fake.write(pane.paneId, "12345");
    fake.write(pane.paneId, "67890");
    await until(() => peer.output() === "1234567890");
    // The budget is spent: the rest of this window is not sent byte by byte…
    fake.write(pane.paneId, "flood");
    fake.write(pane.paneId, " more");
    await Bun.sleep(5);
    expect(peer.output()).toBe("1234567890");
    expect(snapshotsOf(peer)).toHaveLength(1);
    // …but painted as it stands once the window is over.
    clock.advance(RATE_WINDOW_MS);
    await until(() => snapshotsOf(peer).length === 2);
    expect(snapshotsOf(peer)[1]!.data).toContain("1234567890flood more");
    // A new window: bytes again.
    clock.advance(RATE_WINDOW_MS);
    fake.write(pane.paneId, "!");
    await until(() => peer.output().endsWith("!"));
  });

  test("a client that drained while its repaint was being taken is repainted all the same", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    peer.queued = 2 * MIB;
    fake.write(pane.paneId, "skipped");
    await Bun.sleep(5);
    // A repaint under way (the window was laid out) whose answer we hold back: its snapshot
    // reaches the viewer while the queue is still full, and is skipped.
    const gate = Promise.withResolvers<void>();
    const take = fake.snapshotPane.bind(fake);
    fake.snapshotPane = async (paneId) => {
      const snapshot = await take(paneId);
      await gate.promise;
      return snapshot;
    };
    await fake.splitWindow(pane.windowId, { tag: "child", cwd: tmpdir(), command: ["agent"] });
    await Bun.sleep(5);
    expect(snapshotsOf(peer)).toHaveLength(1);
    // The queue drains meanwhile: that drain comes while the repaint is still under way.
    peer.queued = 0;
    connection.drained();
    gate.resolve();
    await until(() => snapshotsOf(peer).length === 2);
    expect(snapshotsOf(peer)[1]!.data).toContain("skipped");
  });

  test("a window laid out again (a split) sends a new snapshot, with the pane's new size", async () => {
    const { peer } = open();
    await until(() => snapshotsOf(peer).length === 1);
    await fake.splitWindow(pane.windowId, {
      tag: "child",
      cwd: tmpdir(),
      command: ["agent"],
      horizontal: true,
    });
    await until(() => snapshotsOf(peer).length === 2);
    expect(snapshotsOf(peer)[1]).toMatchObject({ cols: 120, rows: 40 });
  });

  test("every viewer of a pane gets every snapshot, in its place", async () => {
    const a = open();
    const b = open();
    await until(() => snapshotsOf(a.peer).length === 2 && snapshotsOf(b.peer).length === 2);
    fake.write(pane.paneId, "shared");
    await until(() => a.peer.output() === "shared" && b.peer.output() === "shared");
  });
});

describe("how a terminal ends", () => {
  const cases: Array<[string, () => unknown, string]> = [
    ["its window is killed", () => fake.killWindow(pane.windowId), "closed"],
    ["its program exits", () => fake.exit(pane.paneId, 0), "exited"],
    [
      "its session ends",
      () =>
        void bus.publish(sampleInput("session.ended", { session: { id: "s1", name: "n", workDir: "/" } })),
      "session-ended",
    ],
    ["tmux is lost", () => fake.killServer(), "tmux-lost"],
  ];
  for (const [when, act, reason] of cases) {
    test(`when ${when}: {type: "ended", reason: "${reason}"}, close 1000, nothing held`, async () => {
      const { peer } = open();
      await until(() => snapshotsOf(peer).length === 1);
      expect(fake.outputListeners()).toBe(1);
      await act();
      await until(() => peer.closedWith !== null);
      expect(peer.last()).toEqual({ type: "ended", reason });
      expect(peer.closedWith).toEqual({ code: 1000, reason });
      expect(fake.outputListeners()).toBe(0);
    });
  }

  test("a client that goes away lets go of the pane", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    connection.closed();
    expect(fake.outputListeners()).toBe(0);
    fake.write(pane.paneId, "nobody listens");
    await Bun.sleep(5);
    expect(peer.sent).toHaveLength(1);
  });

  test("a session that ended before the socket opened is ended at once", async () => {
    await fake.killWindow(pane.windowId);
    const { peer } = open();
    expect(peer.sent).toEqual([{ type: "ended", reason: "session-ended" }]);
    expect(peer.closedWith).toEqual({ code: 1000, reason: "session-ended" });
    expect(fake.outputListeners()).toBe(0);
  });
});

describe("control and input", () => {
  test("with sessions:write: granted and audited once; input typed as its exact bytes", async () => {
    const { peer, connection } = open(keyHolder("writer", ["sessions:read", "sessions:write"]));
    await until(() => snapshotsOf(peer).length === 1);
    connection.received(JSON.stringify({ type: "control" }));
    connection.received(JSON.stringify({ type: "control" }));
    expect(peer.texts().slice(-2)).toEqual([
      { type: "control", granted: true },
      { type: "control", granted: true },
    ]);
    expect(audit).toEqual([
      {
        actor: "key:writer",
        tenantId: null,
        ip: "127.0.0.1",
        action: "session.terminal_control",
        target: "s1",
        outcome: "success",
      },
    ]);
    connection.received(JSON.stringify({ type: "input", data: "ls\r\x1b[A\x03é" }));
    await until(() => fake.inputs(pane.paneId).length === 1);
    expect(fake.inputs(pane.paneId)).toEqual([
      { kind: "bytes", bytes: new TextEncoder().encode("ls\r\x1b[A\x03é") },
    ]);
  });

  test("without sessions:write: refused (audited once), and input stays out of the pane", async () => {
    const { peer, connection } = open(keyHolder("reader", ["sessions:read"]));
    await until(() => snapshotsOf(peer).length === 1);
    for (const _ of [1, 2, 3]) connection.received('{"type":"control"}');
    expect(peer.last()).toEqual({
      type: "control",
      granted: false,
      reason: "key:reader lacks the scope sessions:write",
    });
    expect(audit.map((r) => r.outcome)).toEqual(["denied"]);
    connection.received('{"type":"input","data":"rm -rf ~\\r"}');
    expect(peer.last()).toMatchObject({ type: "error", code: "FORBIDDEN" });
    await Bun.sleep(5);
    expect(fake.inputs(pane.paneId)).toEqual([]);
  });

  test("a session's own key watches but never types: its keys would answer the dialogs of the sessions it made", async () => {
    const agent = {
      ...keyHolder("session s0 (ag mcp)", ["sessions:read", "sessions:write"]),
      sessionId: "s0",
    };
    const { peer, connection } = open(agent);
    await until(() => snapshotsOf(peer).length === 1);
    connection.received('{"type":"control"}');
    expect(peer.last()).toEqual({
      type: "control",
      granted: false,
      reason: "a session's own key watches a terminal; it does not type into one",
    });
    connection.received('{"type":"input","data":"1"}');
    expect(peer.last()).toMatchObject({ type: "error", code: "FORBIDDEN" });
    await Bun.sleep(5);
    expect(fake.inputs(pane.paneId)).toEqual([]);
  });

  test("input before control is refused and ignored; too large an input too", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    connection.received('{"type":"input","data":"early"}');
    expect(peer.last()).toMatchObject({ type: "error", code: "FORBIDDEN" });
    connection.received('{"type":"control"}');
    connection.received(JSON.stringify({ type: "input", data: "é".repeat(MAX_INPUT_BYTES / 2 + 1) }));
    expect(peer.last()).toMatchObject({ type: "error", code: "PAYLOAD_TOO_LARGE" });
    connection.received(JSON.stringify({ type: "input", data: "x".repeat(MAX_INPUT_BYTES) }));
    await until(() => fake.inputs(pane.paneId).length === 1);
    expect(fake.typed(pane.paneId)).toEqual(["x".repeat(MAX_INPUT_BYTES)]);
  });

  test("a key revoked while the terminal is open loses control at its next keystroke", async () => {
    const { peer, connection } = open(keyHolder("writer", ["sessions:write"]));
    await until(() => snapshotsOf(peer).length === 1);
    connection.received('{"type":"control"}');
    revoked.add("writer");
    connection.received('{"type":"input","data":"after revocation"}');
    expect(peer.last()).toEqual({
      type: "control",
      granted: false,
      reason: "the credential this terminal was opened with is no longer valid",
    });
    await Bun.sleep(5);
    expect(fake.inputs(pane.paneId)).toEqual([]);
  });

  test("a key revoked while the terminal is open stops watching too: at the next check or repaint", async () => {
    const clock = createManualClock();
    const terminals = service({ clock });
    const peer = fakePeer();
    terminals.open("s1", { principal: keyHolder("watcher", ["sessions:read"]), ip: null }, peer);
    await until(() => snapshotsOf(peer).length === 1);
    clock.advance(ACCESS_CHECK_MS);
    fake.write(pane.paneId, "still allowed");
    await until(() => peer.output() === "still allowed");
    revoked.add("watcher");
    clock.advance(ACCESS_CHECK_MS);
    expect(peer.last()).toEqual({ type: "ended", reason: "revoked" });
    expect(peer.closedWith).toMatchObject({ code: CLOSE.ENDED });
    fake.write(pane.paneId, "not for them");
    await Bun.sleep(5);
    expect(peer.output()).toBe("still allowed");
  });

  test("however many watch a flooding pane, it is repainted at most once per rate window", async () => {
    const clock = createManualClock();
    let taken = 0;
    const counted = {
      ...fake,
      snapshotPane: (id: string) => {
        taken++;
        return fake.snapshotPane(id);
      },
    };
    const terminals = service({ tmux: counted, maxBytesPerWindow: 10, clock });
    const peers = Array.from({ length: 8 }, () => fakePeer());
    for (const [n, peer] of peers.entries()) {
      terminals.open("s1", { principal: LOCAL, ip: null }, peer);
      clock.advance(n % 3); // joined at staggered moments
    }
    clock.advance(RATE_WINDOW_MS);
    await until(() => peers.every((p) => snapshotsOf(p).length >= 1));
    const before = taken;
    for (let round = 0; round < 8; round++) {
      fake.write(pane.paneId, "x".repeat(50)); // over every viewer's budget
      clock.advance(RATE_WINDOW_MS / 2);
      await Bun.sleep(1);
    }
    clock.advance(RATE_WINDOW_MS);
    await Bun.sleep(5);
    // 8 rounds of half a window = 4 windows (+1 to settle): 5 repaints at most, not 8 × 5.
    expect(taken - before).toBeLessThanOrEqual(6);
    expect(taken - before).toBeGreaterThanOrEqual(1);
  });

  test("bad messages get an error and change nothing", async () => {
    const { peer, connection } = open();
    await until(() => snapshotsOf(peer).length === 1);
    for (const bad of [
      "{",
      "null",
      "[]",
      '{"type":"resize"}',
      '{"type":"input"}',
      '{"type":"input","data":1}',
    ]) {
      connection.received(bad);
      expect([bad, peer.last()?.type, peer.last()?.code]).toEqual([bad, "error", "VALIDATION_ERROR"]);
    }
    connection.received(new Uint8Array([123, 125]));
    expect(peer.last()).toMatchObject({ type: "error", code: "VALIDATION_ERROR" });
    // Unknown fields are ignored: a newer client's extras do not break it.
    connection.received('{"type":"control","since":"v2"}');
    expect(peer.last()).toEqual({ type: "control", granted: true });
    expect(peer.closedWith).toBeNull();
  });
});
