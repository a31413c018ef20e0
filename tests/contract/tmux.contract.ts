import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import type { Tmux, TmuxEvent, TmuxPane } from "../../src/tmux/tmux.ts";

/**
 * The behaviour every Tmux implementation shares: run by tests/unit/tmux-fake.test.ts on the
 * fake and by tests/integration/tmux-control.test.ts on real tmux.
 *
 * Observing a pane needs a program in it. The subject supplies one (a shell script on real tmux,
 * the fake's controls on the fake) that reads its terminal raw, with bracketed paste on, records
 * every byte it reads, prints what `say` gives it and exits when told to.
 */
export interface TestProgram {
  /** argv for newWindow. */
  command: string[];
  /** Resolves once the program reads its terminal raw (input sent earlier could be echoed). */
  ready(paneId: string): Promise<void>;
  say(paneId: string, text: string): Promise<void>;
  exit(paneId: string, status: number): Promise<void>;
  /** Every byte the program has read from its terminal so far. */
  received(paneId: string): Promise<string>;
}

export interface TmuxContractSubject {
  /** Started. */
  tmux: Tmux;
  /** Another client on the same server, as after an ag restart. Started. */
  reopen(): Promise<Tmux>;
  program(): TestProgram;
  cleanup(): Promise<void>;
}

/** Waits for the first event matching `match`; subscribe BEFORE acting. */
export function nextEvent(
  tmux: Tmux,
  match: (event: TmuxEvent) => boolean,
  timeoutMs = 5000,
): Promise<TmuxEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching tmux event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = tmux.on((event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/**
 * What a watcher got, without what the program printed as it started (bracketed paste on): tmux
 * may read that from the pane after the program said it was ready, when the machine is busy.
 */
const PASTE_ON = "\x1b[?2004h";
const afterStart = (bytes: string) => (bytes.startsWith(PASTE_ON) ? bytes.slice(PASTE_ON.length) : bytes);

/** Retries an assertion until it passes (a real terminal delivers asynchronously). */
export async function eventually(check: () => Promise<void> | void, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await Bun.sleep(20);
    }
  }
}

/** Panes in a stable order, to compare listings (tmux lists a window's panes by position). */
function byPane(panes: TmuxPane[]): TmuxPane[] {
  return [...panes].sort((a, b) => a.paneId.localeCompare(b.paneId));
}

export function tmuxContract(name: string, make: () => Promise<TmuxContractSubject>): void {
  describe(`Tmux contract: ${name}`, () => {
    let subject: TmuxContractSubject;
    let tmux: Tmux;

    beforeEach(async () => {
      subject = await make();
      tmux = subject.tmux;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    async function launch(tag = "sess-1"): Promise<{ pane: TmuxPane; program: TestProgram }> {
      const program = subject.program();
      const pane = await tmux.newWindow({ tag, name: "agent", cwd: tmpdir(), command: program.command });
      await program.ready(pane.paneId);
      return { pane, program };
    }

    /** A second program in a new pane of `parent`'s window. */
    async function split(
      parent: TmuxPane,
      tag = "sess-child",
    ): Promise<{ pane: TmuxPane; program: TestProgram }> {
      const program = subject.program();
      const pane = await tmux.splitWindow(parent.windowId, { tag, cwd: tmpdir(), command: program.command });
      await program.ready(pane.paneId);
      return { pane, program };
    }

    test("is healthy once started", () => {
      expect(tmux.health()).toEqual({ healthy: true, error: null });
    });

    test("a new window is tagged, alive, and listed with its tag", async () => {
      const { pane } = await launch("sess-tagged");
      expect(pane.windowId).toMatch(/^@\d+$/);
      expect(pane.paneId).toMatch(/^%\d+$/);
      expect(pane.pid).toBeGreaterThan(0);
      expect(pane).toMatchObject({ tag: "sess-tagged", dead: false, deadStatus: null });
      expect(await tmux.listPanes()).toEqual([pane]);
    });

    test("every window of the session is listed with its own tag", async () => {
      const a = await launch("sess-a");
      const b = await launch("sess-b");
      const listed = await tmux.listPanes();
      expect(listed.map((p) => [p.paneId, p.tag]).sort()).toEqual(
        [
          [a.pane.paneId, "sess-a"],
          [b.pane.paneId, "sess-b"],
        ].sort(),
      );
    });

    test("output signals pane-output, and capture shows it", async () => {
      const { pane, program } = await launch();
      const changed = nextEvent(tmux, (e) => e.type === "pane-output" && e.paneId === pane.paneId);
      await program.say(pane.paneId, "hello from the program\n");
      await changed;
      await eventually(async () =>
        expect(await tmux.capturePane(pane.paneId)).toContain("hello from the program"),
      );
    });

    test("a watcher gets exactly the bytes the program writes, in order, until it stops", async () => {
      const { pane, program } = await launch();
      const got: Uint8Array[] = [];
      const off = tmux.watchOutput(pane.paneId, (e) => e.type === "bytes" && got.push(e.bytes.slice()));
      expect(tmux.outputListeners()).toBe(1);
      const text = "plain \x1b[1mbold\x1b[0m \x01\x07 back\\slash \x1b]0;title\x07 héllo 日本 🎉";
      await program.say(pane.paneId, text);
      await eventually(() => expect(afterStart(Buffer.concat(got).toString())).toBe(text));
      off();
      expect(tmux.outputListeners()).toBe(0);
      await program.say(pane.paneId, " unheard");
      await eventually(async () => expect(await tmux.capturePane(pane.paneId)).toContain("unheard"));
      expect(afterStart(Buffer.concat(got).toString())).toBe(text);
    });

    test("a snapshot shows the screen, its size and cursor, and reaches watchers in its place", async () => {
      const { pane, program } = await launch();
      const events: string[] = [];
      const off = tmux.watchOutput(pane.paneId, (e) =>
        events.push(
          e.type === "bytes" ? Buffer.from(e.bytes).toString() : `[snapshot ${e.snapshot.lines[0]}]`,
        ),
      );
      const seen = () => afterStart(events.join(""));
      await program.say(pane.paneId, "first words");
      await eventually(() => expect(seen()).toBe("first words"));
      const snapshot = await tmux.snapshotPane(pane.paneId);
      expect(snapshot).toMatchObject({ width: 120, height: 40, cursor: { x: 11, y: 0, visible: true } });
      expect(snapshot.lines).toHaveLength(40);
      expect(snapshot.lines[0]).toBe("first words");
      expect(snapshot.lines.slice(1).every((line) => line === "")).toBe(true);
      expect(snapshot.normalLines).toBeNull();
      expect(snapshot.modes).toMatchObject({ alternateScreen: false, wrap: true, mouse: "off" });
      expect(snapshot.modes.scrollRegion).toEqual({ top: 0, bottom: 39 });
      await program.say(pane.paneId, ", then more");
      await eventually(() => expect(seen()).toBe("first words[snapshot first words], then more"));
      off();
    });

    test("snapshots asked for together are taken in turn, and each watcher gets each one", async () => {
      const { pane, program } = await launch();
      await program.say(pane.paneId, "on screen");
      await eventually(async () => expect(await tmux.capturePane(pane.paneId)).toContain("on screen"));
      const [a, b] = [0, 1].map(() => {
        const events: string[] = [];
        const off = tmux.watchOutput(pane.paneId, (e) => events.push(e.type));
        return { events, off };
      });
      const taken = await Promise.all([1, 2, 3].map(() => tmux.snapshotPane(pane.paneId)));
      for (const snapshot of taken) expect(snapshot.lines[0]).toBe("on screen");
      await eventually(() => expect(a!.events.length).toBeGreaterThanOrEqual(2));
      expect(new Set(a!.events)).toEqual(new Set(["snapshot"]));
      expect(b!.events).toEqual(a!.events);
      a!.off();
      b!.off();
      expect(tmux.outputListeners()).toBe(0);
    });

    test("bytes sent arrive exactly, control sequences included", async () => {
      const { pane, program } = await launch();
      const keys = "a\r\x1b[A\x1bOB\x03\x7f\t é 日本 🎉 \x00z";
      await tmux.sendBytes(pane.paneId, new TextEncoder().encode(keys));
      await eventually(async () => expect(await program.received(pane.paneId)).toBe(keys));
    });

    test("splitting a window signals window-layout for it", async () => {
      const parent = await launch("sess-parent");
      const laid = nextEvent(tmux, (e) => e.type === "window-layout" && e.windowId === parent.pane.windowId);
      await split(parent.pane);
      await laid;
    });

    test("literal text arrives as typed, no key names interpreted", async () => {
      const { pane, program } = await launch();
      const text = `Enter C-c héllo wörld 🎉 日本 $HOME ~ ; {x} #{pane_id} "q" 'q' \\`;
      await tmux.sendLiteral(pane.paneId, text);
      await eventually(async () => expect(await program.received(pane.paneId)).toBe(text));
    });

    test("named keys arrive as separate key presses", async () => {
      const { pane, program } = await launch();
      await tmux.sendKeys(pane.paneId, ["a", "Enter", "Escape", "C-c", "Up", "BTab", "Tab"]);
      await eventually(async () =>
        expect(await program.received(pane.paneId)).toBe("a\r\x1b\x03\x1b[A\x1b[Z\t"),
      );
    });

    test("a paste arrives exactly, as one bracketed block (newlines as CR, like a terminal)", async () => {
      const { pane, program } = await launch();
      const text = `first line\n\tindented ü 日本 🎉\n$HOME ~ ; #{pane_id} "q" 'q' \\\n\nlast`;
      await tmux.paste(pane.paneId, text);
      const expected = `\x1b[200~${text.replaceAll("\n", "\r")}\x1b[201~`;
      await eventually(async () => expect(await program.received(pane.paneId)).toBe(expected));
    });

    test("pasted text cannot end the bracket early", async () => {
      const { pane, program } = await launch();
      await tmux.paste(pane.paneId, "a\x1b[201~\rb");
      await eventually(async () =>
        expect(await program.received(pane.paneId)).toBe("\x1b[200~a\rb\x1b[201~"),
      );
    });

    test("killWindow closes it, signals window-closed, and is harmless when repeated", async () => {
      const { pane } = await launch();
      const closed = nextEvent(tmux, (e) => e.type === "window-closed");
      await tmux.killWindow(pane.windowId);
      expect(await closed).toEqual({ type: "window-closed", windowId: pane.windowId });
      expect(await tmux.listPanes()).toEqual([]);
      await tmux.killWindow(pane.windowId);
    });

    test("the program exiting signals pane-died with its status; the pane stays, dead", async () => {
      const { pane, program } = await launch();
      const died = nextEvent(tmux, (e) => e.type === "pane-died");
      await program.exit(pane.paneId, 3);
      expect(await died).toEqual({ type: "pane-died", paneId: pane.paneId, status: 3 });
      expect(await tmux.listPanes()).toEqual([{ ...pane, pid: null, dead: true, deadStatus: 3 }]);
    });

    test("close() leaves windows running; a new client re-adopts them by listing", async () => {
      const { pane, program } = await launch("sess-survivor");
      await tmux.close();
      expect(tmux.health().healthy).toBe(false);
      await expect(tmux.listPanes()).rejects.toThrow();
      const again = await subject.reopen();
      expect(await again.listPanes()).toEqual([pane]);
      await program.say(pane.paneId, "still running\n");
      await eventually(async () => expect(await again.capturePane(pane.paneId)).toContain("still running"));
    });

    test("a pane split into a window is listed in that window with its own tag, by any client", async () => {
      const parent = await launch("sess-parent");
      const child = await split(parent.pane, "sess-child");
      expect(child.pane.windowId).toBe(parent.pane.windowId);
      expect(child.pane.paneId).toMatch(/^%\d+$/);
      expect(child.pane.paneId).not.toBe(parent.pane.paneId);
      expect(child.pane.pid).toBeGreaterThan(0);
      expect(child.pane).toMatchObject({ tag: "sess-child", dead: false, deadStatus: null });
      expect(byPane(await tmux.listPanes())).toEqual(byPane([parent.pane, child.pane]));
      // The tags live in tmux: a client started later (ag restarted) lists the same.
      const again = await subject.reopen();
      expect(byPane(await again.listPanes())).toEqual(byPane([parent.pane, child.pane]));
    });

    test("text pasted into a split pane arrives in that pane only", async () => {
      const parent = await launch("sess-parent");
      const child = await split(parent.pane);
      await tmux.paste(child.pane.paneId, "for the child\nonly");
      await eventually(async () =>
        expect(await child.program.received(child.pane.paneId)).toBe("\x1b[200~for the child\ronly\x1b[201~"),
      );
      // Typed after the paste was delivered: the first pane reads this and nothing before it.
      await tmux.sendLiteral(parent.pane.paneId, "p");
      await eventually(async () => expect(await parent.program.received(parent.pane.paneId)).toBe("p"));
    });

    test("a split pane's output signals pane-output for that pane", async () => {
      const parent = await launch("sess-parent");
      const child = await split(parent.pane);
      const changed = nextEvent(tmux, (e) => e.type === "pane-output" && e.paneId === child.pane.paneId);
      await child.program.say(child.pane.paneId, "hello from the child\n");
      await changed;
      await eventually(async () =>
        expect(await tmux.capturePane(child.pane.paneId)).toContain("hello from the child"),
      );
      expect(await tmux.capturePane(parent.pane.paneId)).not.toContain("hello from the child");
    });

    test("a split pane's program exiting signals pane-died for it; the first pane lives on", async () => {
      const parent = await launch("sess-parent");
      const child = await split(parent.pane);
      const died = nextEvent(tmux, (e) => e.type === "pane-died");
      await child.program.exit(child.pane.paneId, 4);
      expect(await died).toEqual({ type: "pane-died", paneId: child.pane.paneId, status: 4 });
      const deadChild = { ...child.pane, pid: null, dead: true, deadStatus: 4 };
      expect(byPane(await tmux.listPanes())).toEqual(byPane([parent.pane, deadChild]));
    });

    test("killPane closes one pane and keeps the window; repeated, it is harmless", async () => {
      const parent = await launch("sess-parent");
      const child = await split(parent.pane);
      const closed: TmuxEvent[] = [];
      const off = tmux.on((e) => e.type === "window-closed" && closed.push(e));
      await tmux.killPane(child.pane.paneId);
      expect(await tmux.listPanes()).toEqual([parent.pane]);
      await tmux.killPane(child.pane.paneId);
      await tmux.sendLiteral(parent.pane.paneId, "still here");
      await eventually(async () =>
        expect(await parent.program.received(parent.pane.paneId)).toBe("still here"),
      );
      off();
      expect(closed).toEqual([]);
    });

    test("killPane on a window's last pane closes the window", async () => {
      const { pane } = await launch();
      const closed = nextEvent(tmux, (e) => e.type === "window-closed");
      await tmux.killPane(pane.paneId);
      expect(await closed).toEqual({ type: "window-closed", windowId: pane.windowId });
      expect(await tmux.listPanes()).toEqual([]);
    });

    test("killWindow closes a split window with every pane in it", async () => {
      const parent = await launch("sess-parent");
      await split(parent.pane);
      const closed = nextEvent(tmux, (e) => e.type === "window-closed");
      await tmux.killWindow(parent.pane.windowId);
      expect(await closed).toEqual({ type: "window-closed", windowId: parent.pane.windowId });
      expect(await tmux.listPanes()).toEqual([]);
    });

    test("bad split requests fail clearly", async () => {
      const { pane } = await launch();
      const base = { tag: "t", cwd: tmpdir(), command: ["true"] };
      await expect(tmux.splitWindow("@999999", base)).rejects.toThrow(/can't find window/);
      await expect(tmux.splitWindow("nope", base)).rejects.toThrow(/window id/);
      await expect(tmux.splitWindow(pane.windowId, { ...base, cwd: "/no/such/dir" })).rejects.toThrow(
        /no such directory/,
      );
      await expect(tmux.splitWindow(pane.windowId, { ...base, command: [] })).rejects.toThrow(
        /needs a command/,
      );
      await expect(tmux.splitWindow(pane.windowId, { ...base, tag: "a\nb" })).rejects.toThrow(/tag/);
      await expect(tmux.killPane("nope")).rejects.toThrow(/pane id/);
      expect(await tmux.listPanes()).toEqual([pane]);
    });

    test("bad requests fail clearly", async () => {
      await expect(tmux.capturePane("%999999")).rejects.toThrow(/can't find pane/);
      await expect(tmux.snapshotPane("%999999")).rejects.toThrow(/can't find pane/);
      await expect(tmux.sendBytes("%999999", new Uint8Array([97]))).rejects.toThrow(/can't find pane/);
      expect(() => tmux.watchOutput("nope", () => {})).toThrow(/pane id/);
      const base = { tag: "t", name: "n", cwd: tmpdir(), command: ["true"] };
      await expect(tmux.newWindow({ ...base, cwd: "/no/such/dir" })).rejects.toThrow(/no such directory/);
      await expect(tmux.newWindow({ ...base, command: [] })).rejects.toThrow(/needs a command/);
      await expect(tmux.newWindow({ ...base, tag: "a\nb" })).rejects.toThrow(/tag/);
      expect(await tmux.listPanes()).toEqual([]);
    });
  });
}
