import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { type TestProgram, tmuxContract } from "../contract/tmux.contract.ts";
import { createFakeTmux, createFakeTmuxServer, type FakeInput, type FakeTmux } from "../fakes/tmux.ts";

/** The bytes a terminal program would read for each key the contract presses. */
const KEY_BYTES: Record<string, string> = {
  Enter: "\r",
  Escape: "\x1b",
  "C-c": "\x03",
  Up: "\x1b[A",
  BTab: "\x1b[Z",
  Tab: "\t",
};

function bytesOf(input: FakeInput): string {
  if (input.kind === "literal") return input.text;
  if (input.kind === "bytes") return new TextDecoder().decode(input.bytes);
  if (input.kind === "paste") return `\x1b[200~${input.text.replaceAll("\n", "\r")}\x1b[201~`;
  return input.keys.map((key) => KEY_BYTES[key] ?? key).join("");
}

/** The contract's test program, played by the fake's controls. */
function fakeProgram(fake: FakeTmux): TestProgram {
  return {
    command: ["test-program"],
    ready: async () => {},
    say: async (paneId, text) => fake.write(paneId, text),
    exit: async (paneId, status) => fake.exit(paneId, status),
    received: async (paneId) => fake.inputs(paneId).map(bytesOf).join(""),
  };
}

tmuxContract("fake", async () => {
  const server = createFakeTmuxServer();
  const tmux = createFakeTmux({ server });
  await tmux.start();
  return {
    tmux,
    async reopen() {
      const again = createFakeTmux({ server });
      await again.start();
      return again;
    },
    program: () => fakeProgram(tmux),
    async cleanup() {
      await tmux.close();
    },
  };
});

describe("fake tmux test controls", () => {
  test("typed() lists what was sent, in order", async () => {
    const fake = createFakeTmux();
    await fake.start();
    const pane = await fake.newWindow({
      tag: "t",
      name: "n",
      cwd: tmpdir(),
      command: ["x"],
      env: { A: "1" },
    });
    await fake.sendLiteral(pane.paneId, "hello");
    await fake.sendKeys(pane.paneId, ["Enter", "C-c"]);
    await fake.paste(pane.paneId, "a\nb");
    expect(fake.typed(pane.paneId)).toEqual(["hello", "Enter", "C-c", "a\nb"]);
    expect(fake.window(pane.windowId)).toMatchObject({
      env: { A: "1" },
      width: 120,
      height: 40,
      command: ["x"],
    });
  });

  test("a split window grows as the real one does; each pane records its launch and size", async () => {
    const fake = createFakeTmux();
    await fake.start();
    const parent = await fake.newWindow({ tag: "p", name: "n", cwd: tmpdir(), command: ["x"] });
    const child = await fake.splitWindow(parent.windowId, {
      tag: "c",
      cwd: tmpdir(),
      command: ["y"],
      env: { B: "2" },
    });
    const window = fake.window(parent.windowId)!;
    expect(window).toMatchObject({ tag: "p", command: ["x"], width: 120, height: 81 });
    expect(window.panes.map((p) => [p.paneId, p.tag, p.width, p.height])).toEqual([
      [parent.paneId, "p", 120, 40],
      [child.paneId, "c", 120, 40],
    ]);
    expect(window.panes[1]).toMatchObject({ command: ["y"], env: { B: "2" } });
    await fake.splitWindow(parent.windowId, { tag: "d", cwd: tmpdir(), command: ["z"], horizontal: true });
    expect(window).toMatchObject({ width: 362, height: 81 });
    expect(window.panes.map((p) => `${p.width}x${p.height}`)).toEqual(["120x81", "120x81", "120x81"]);
  });

  test("killServer: server-lost, every window gone, then connected again", async () => {
    const fake = createFakeTmux();
    const events: string[] = [];
    fake.on((e) => events.push(e.type));
    await fake.start();
    await fake.newWindow({ tag: "t", name: "n", cwd: tmpdir(), command: ["x"] });
    fake.killServer();
    // The loss is delivered at once; the reconnection on a later timer.
    expect(fake.health().healthy).toBe(false);
    await Bun.sleep(5);
    expect(events).toEqual(["connected", "server-lost", "connected"]);
    expect(fake.health()).toEqual({ healthy: true, error: null });
    expect(await fake.listPanes()).toEqual([]);
  });

  test("setScreen sends watchers the bytes that draw it; write sends its own and appends them", async () => {
    const fake = createFakeTmux();
    await fake.start();
    const pane = await fake.newWindow({ tag: "t", name: "n", cwd: tmpdir(), command: ["x"] });
    const seen: string[] = [];
    const off = fake.watchOutput(pane.paneId, (e) =>
      seen.push(
        e.type === "bytes" ? Buffer.from(e.bytes).toString() : `[${e.snapshot.lines.slice(0, 2).join("|")}]`,
      ),
    );
    fake.setScreen(pane.paneId, "line one\nline two");
    fake.write(pane.paneId, "\r\nthree");
    await fake.snapshotPane(pane.paneId);
    await Bun.sleep(0);
    expect(seen).toEqual(["\x1b[H\x1b[2Jline one\r\nline two", "\r\nthree", "[line one|line two]"]);
    expect(fake.screen(pane.paneId)).toBe("line one\nline two\nthree");
    expect((await fake.snapshotPane(pane.paneId)).cursor).toEqual({ x: 5, y: 2, visible: true });
    off();
    expect(fake.outputListeners()).toBe(0);
  });

  test("sendBytes is recorded as bytes; typed() shows them as text", async () => {
    const fake = createFakeTmux();
    await fake.start();
    const pane = await fake.newWindow({ tag: "t", name: "n", cwd: tmpdir(), command: ["x"] });
    await fake.sendBytes(pane.paneId, new TextEncoder().encode("\x1b[Aok\r"));
    expect(fake.typed(pane.paneId)).toEqual(["\x1b[Aok\r"]);
  });

  test("a paste over 256 KiB is refused", async () => {
    const fake = createFakeTmux();
    await fake.start();
    const pane = await fake.newWindow({ tag: "t", name: "n", cwd: tmpdir(), command: ["x"] });
    await expect(fake.paste(pane.paneId, "x".repeat(256 * 1024 + 1))).rejects.toThrow(/exceeds/);
  });
});
