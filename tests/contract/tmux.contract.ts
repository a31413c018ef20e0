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

    test("bad requests fail clearly", async () => {
      await expect(tmux.capturePane("%999999")).rejects.toThrow(/can't find pane/);
      const base = { tag: "t", name: "n", cwd: tmpdir(), command: ["true"] };
      await expect(tmux.newWindow({ ...base, cwd: "/no/such/dir" })).rejects.toThrow(/no such directory/);
      await expect(tmux.newWindow({ ...base, command: [] })).rejects.toThrow(/needs a command/);
      await expect(tmux.newWindow({ ...base, tag: "a\nb" })).rejects.toThrow(/tag/);
      expect(await tmux.listPanes()).toEqual([]);
    });
  });
}
