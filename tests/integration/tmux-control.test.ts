import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { notFound } from "../../src/shared/install.ts";
import { startupCommand } from "../../src/tmux/commands.ts";
import { openControlConnection } from "../../src/tmux/connection.ts";
import { createControlTmux } from "../../src/tmux/control.ts";
import type { PaneOutputEvent, Tmux, TmuxEvent, TmuxPane } from "../../src/tmux/tmux.ts";
import { eventually, nextEvent, tmuxContract } from "../contract/tmux.contract.ts";
import { tempDir } from "../helpers/temp.ts";
import { killTmuxServer, privateSocket, shellProgram, tmux as tmuxCli } from "../helpers/tmux.ts";

const SESSION = "ag-test";

async function startClient(socket: string): Promise<Tmux> {
  const client = createControlTmux({ socket, session: SESSION });
  await client.start();
  return client;
}

/** A started client on a fresh private server; closed and the server killed at the end. */
async function withClient(run: (client: Tmux, socket: string) => Promise<void>): Promise<void> {
  const socket = privateSocket();
  const client = await startClient(socket);
  try {
    await run(client, socket);
  } finally {
    await client.close();
    killTmuxServer(socket);
  }
}

/** Plays CR, LF and plain text on screen rows from a cursor (all a line-printing program writes). */
function play(lines: string[], cursor: { x: number; y: number }, text: string): string[] {
  const rows = [...lines];
  let { x, y } = cursor;
  for (const ch of text) {
    if (ch === "\r") x = 0;
    else if (ch === "\n") {
      y++;
      if (y >= rows.length) rows.push("");
    } else {
      const row = rows[y]!;
      rows[y] = row.slice(0, x).padEnd(x) + ch + row.slice(x + 1);
      x++;
    }
  }
  return rows;
}

/** Line ends in the bytes a viewer got after its newest snapshot. */
function newlinesAfterLastSnapshot(events: PaneOutputEvent[]): number {
  const last = events.findLastIndex((e) => e.type === "snapshot");
  let count = 0;
  for (const e of events.slice(last + 1))
    if (e.type === "bytes") for (const b of e.bytes) if (b === 10) count++;
  return count;
}

function cli(socket: string, ...args: string[]): string {
  return tmuxCli(socket, ...args).stdout.trim();
}

tmuxContract("real tmux, control mode", async () => {
  const socket = privateSocket();
  const clients = [await startClient(socket)];
  return {
    tmux: clients[0]!,
    async reopen() {
      clients.push(await startClient(socket));
      return clients.at(-1)!;
    },
    program: () => shellProgram(tempDir()),
    async cleanup() {
      for (const client of clients) await client.close();
      killTmuxServer(socket);
    },
  };
});

describe("control-mode client on real tmux", () => {
  test("applies the server config; the session outlives its last window and close()", async () => {
    const socket = privateSocket();
    const client = await startClient(socket);
    expect(cli(socket, "show-options", "-gv", "history-limit")).toBe("50000");
    expect(cli(socket, "show-options", "-wgv", "remain-on-exit")).toBe("on");
    expect(cli(socket, "show-options", "-sv", "focus-events")).toBe("on");
    expect(cli(socket, "show-options", "-sv", "exit-empty")).toBe("off");
    expect(cli(socket, "show-options", "-sv", "default-terminal")).toBe("tmux-256color");
    const pane = await client.newWindow({ tag: "t", name: "n", cwd: tempDir(), command: ["sleep", "600"] });
    await client.killWindow(pane.windowId);
    expect(await client.listPanes()).toEqual([]);
    expect(tmuxCli(socket, "has-session", "-t", `=${SESSION}`).exitCode).toBe(0);

    const kept = await client.newWindow({
      tag: "kept",
      name: "n",
      cwd: tempDir(),
      command: ["sleep", "600"],
    });
    await client.close();
    expect(cli(socket, "list-panes", "-t", kept.windowId, "-F", "#{pane_id} #{pane_dead}")).toBe(
      `${kept.paneId} 0`,
    );
    killTmuxServer(socket);
  });

  test("a config file, when given, is read by the server ag starts", async () => {
    const socket = privateSocket();
    const configFile = join(tempDir(), "tmux.conf");
    writeFileSync(configFile, "set -g @ag_conf_marker read\n");
    const client = createControlTmux({ socket, session: SESSION, configFile });
    await client.start();
    expect(cli(socket, "show-options", "-gv", "@ag_conf_marker")).toBe("read");
    await client.close();
    killTmuxServer(socket);
  });

  test("newWindow runs argv directly, with cwd, env, literal name and size", async () => {
    await withClient(async (client, socket) => {
      const cwd = join(tempDir(), "work dir #{pane_id} $HOME");
      mkdirSync(cwd);
      const out = join(tempDir(), "out");
      const pane = await client.newWindow({
        tag: "t",
        name: "name #{pane_id} ~x",
        cwd,
        command: [
          "sh",
          "-c",
          'printf "%s|%s|%s" "$PWD" "$AG_VAR" "$1" > "$2"; exec sleep 600',
          "sh",
          "a 'b' $HOME;",
          out,
        ],
        env: { AG_VAR: 'v $HOME #{pane_id} "q"' },
      });
      await eventually(() => expect(existsSync(out) && statSync(out).size > 0).toBe(true));
      expect(readFileSync(out, "utf8")).toBe(`${cwd}|v $HOME #{pane_id} "q"|a 'b' $HOME;`);
      const shown = cli(
        socket,
        "display-message",
        "-p",
        "-t",
        pane.windowId,
        "#{window_name}|#{window_width}x#{window_height}",
      );
      expect(shown).toBe("name #{pane_id} ~x|120x40");

      // One element: still a plain exec (a shell would split this path at the space).
      const program = join(tempDir(), "my prog");
      writeFileSync(program, `#!/bin/sh\necho ran > "${out}.single"\nexec sleep 600\n`);
      chmodSync(program, 0o755);
      const single = await client.newWindow({
        tag: "t2",
        name: "n",
        cwd,
        command: [program],
        width: 100,
        height: 30,
      });
      await eventually(() => expect(existsSync(`${out}.single`)).toBe(true));
      expect(
        cli(socket, "display-message", "-p", "-t", single.windowId, "#{window_width}x#{window_height}"),
      ).toBe("100x30");
    });
  });

  test("agents do not inherit ag's settings: SVC_* stays out of the tmux server's environment", async () => {
    process.env.SVC_TMUX_TEST_SECRET = "hunter2-tmux";
    try {
      await withClient(async (client) => {
        const out = join(tempDir(), "env");
        await client.newWindow({
          tag: "t",
          name: "n",
          cwd: tempDir(),
          command: ["sh", "-c", 'env > "$1"; exec sleep 600', "sh", out],
          env: { SVC_SESSION_ID: "given-explicitly" },
        });
        await eventually(() => expect(existsSync(out) && statSync(out).size > 0).toBe(true));
        const env = readFileSync(out, "utf8");
        expect(env).toContain("SVC_SESSION_ID=given-explicitly");
        expect(env).toContain("PATH=");
        expect(env).not.toContain("hunter2-tmux");
      });
    } finally {
      delete process.env.SVC_TMUX_TEST_SECRET;
    }
  });

  test("splitWindow: the pane runs argv with cwd and env, tagged on the pane; the window grows to fit", async () => {
    await withClient(async (client, socket) => {
      const parent = await client.newWindow({
        tag: "parent",
        name: "n",
        cwd: tempDir(),
        command: ["sleep", "600"],
      });
      const cwd = join(tempDir(), "child dir #{pane_id}");
      mkdirSync(cwd);
      const out = join(tempDir(), "out");
      const child = await client.splitWindow(parent.windowId, {
        tag: "child",
        cwd,
        command: ["sh", "-c", 'printf "%s|%s" "$PWD" "$AG_VAR" > "$1"; exec sleep 600', "sh", out],
        env: { AG_VAR: "v $HOME" },
      });
      await eventually(() => expect(existsSync(out) && statSync(out).size > 0).toBe(true));
      expect(readFileSync(out, "utf8")).toBe(`${cwd}|v $HOME`);
      expect(cli(socket, "show-options", "-pv", "-t", child.paneId, "@svc_session_id")).toBe("child");
      expect(cli(socket, "show-options", "-wv", "-t", parent.windowId, "@svc_session_id")).toBe("parent");
      const sizes = (windowId: string) =>
        cli(
          socket,
          "list-panes",
          "-t",
          windowId,
          "-F",
          "#{pane_id} #{pane_width}x#{pane_height} #{window_width}x#{window_height}",
        );
      // Stacked, each keeps the full 120x40, with a border line between them.
      expect(sizes(parent.windowId)).toBe(`${parent.paneId} 120x40 120x81\n${child.paneId} 120x40 120x81`);
      // Side by side, three panes of at least 100 columns; the window never shrinks.
      const third = await client.splitWindow(parent.windowId, {
        tag: "third",
        cwd,
        command: ["sleep", "600"],
        width: 100,
        height: 30,
        horizontal: true,
      });
      expect(sizes(parent.windowId)).toBe(
        [parent, child, third].map((p) => `${p.paneId} 100x81 302x81`).join("\n"),
      );
    });
  });

  test("splitWindow refuses the placeholder window and any window outside ag's session", async () => {
    await withClient(async (client, socket) => {
      const base = { tag: "t", cwd: tempDir(), command: ["sleep", "600"] };
      const placeholder = cli(socket, "list-windows", "-t", `=${SESSION}`, "-F", "#{window_id}");
      expect(placeholder).toMatch(/^@\d+$/);
      await expect(client.splitWindow(placeholder, base)).rejects.toThrow(/placeholder/);
      tmuxCli(socket, "new-session", "-d", "-s", "other", "sleep", "600");
      const foreign = cli(socket, "list-windows", "-t", "=other", "-F", "#{window_id}");
      await expect(client.splitWindow(foreign, base)).rejects.toThrow(/can't find window/);
      expect(cli(socket, "list-panes", "-a", "-F", "#{pane_id}").split("\n")).toHaveLength(2);
      expect(await client.listPanes()).toEqual([]);
    });
  });

  test("after kill-server: server-lost and unhealthy, then connected and healthy again", async () => {
    await withClient(async (client, socket) => {
      const events: TmuxEvent["type"][] = [];
      client.on((e) => events.push(e.type));
      const lost = nextEvent(client, (e) => e.type === "server-lost");
      const back = nextEvent(client, (e) => e.type === "connected");
      tmuxCli(socket, "kill-server");
      await lost;
      expect(client.health().healthy).toBe(false);
      expect(client.health().error).toContain("tmux server lost");
      await back;
      expect(client.health()).toEqual({ healthy: true, error: null });
      expect(events).toEqual(["server-lost", "connected"]);
      expect(await client.listPanes()).toEqual([]);
      const pane = await client.newWindow({
        tag: "after",
        name: "n",
        cwd: tempDir(),
        command: ["sleep", "600"],
      });
      expect((await client.listPanes()).map((p) => p.tag)).toEqual(["after"]);
      expect(pane.dead).toBe(false);
    });
  });

  test("a program killed by a signal: pane-died with no status", async () => {
    await withClient(async (client) => {
      const died = nextEvent(client, (e) => e.type === "pane-died");
      const pane = await client.newWindow({
        tag: "t",
        name: "n",
        cwd: tempDir(),
        command: ["sh", "-c", "sleep 0.2; kill -9 $$"],
      });
      expect(await died).toEqual({ type: "pane-died", paneId: pane.paneId, status: null });
      expect(await client.listPanes()).toEqual([{ ...pane, pid: null, dead: true, deadStatus: null }]);
    });
  });

  test("pane text that looks like reply framing does not break replies", async () => {
    await withClient(async (client) => {
      const closed: TmuxEvent[] = [];
      client.on((e) => e.type === "window-closed" && closed.push(e));
      const guards = [
        "%end 1 2 1",
        "%begin 1 2 1",
        "%error 1795337365 260 1",
        "%end 1795337365 260 1",
        "%window-close @0",
        "%exit",
        "%begin 1 3 1",
        "after",
      ];
      const pane = await client.newWindow({
        tag: "t",
        name: "n",
        cwd: tempDir(),
        command: ["sh", "-c", `printf '%s\\n' "$@"; exec sleep 600`, "sh", ...guards],
      });
      await eventually(async () => expect(await client.capturePane(pane.paneId)).toContain("after"));
      const screen = await client.capturePane(pane.paneId);
      expect(screen.startsWith(guards.map((line) => `${line}\n`).join(""))).toBe(true);
      expect(await client.listPanes()).toEqual([pane]);
      expect(closed).toEqual([]);
      expect(client.health().healthy).toBe(true);
    });
  });

  test("a flood of output gives a bounded number of pane-output events, the last change included", async () => {
    await withClient(async (client) => {
      const script =
        "i=0; while [ $i -lt 40 ]; do seq 1 200; i=$((i+1)); sleep 0.02; done; echo FLOOD-DONE; exec sleep 600";
      const seen: Array<{ at: number; screen: Promise<string> }> = [];
      let paneId = "";
      client.on((e) => {
        // A consumer re-reads the screen on each signal: the last read must show the end.
        if (e.type === "pane-output" && e.paneId === paneId)
          seen.push({ at: performance.now(), screen: client.capturePane(paneId) });
      });
      const started = performance.now();
      paneId = (
        await client.newWindow({ tag: "t", name: "n", cwd: tempDir(), command: ["sh", "-c", script] })
      ).paneId;
      await eventually(async () => expect(await client.capturePane(paneId)).toContain("FLOOD-DONE"), 15_000);
      await Bun.sleep(200);
      const elapsed = seen.at(-1)!.at - started;
      // 8,000 lines (about 3,000-8,000 %output notifications a second); signals ≤ 1 per 30 ms.
      expect(seen.length).toBeGreaterThan(2);
      expect(seen.length).toBeLessThanOrEqual(Math.ceil(elapsed / 30) + 2);
      expect(await seen.at(-1)!.screen).toContain("FLOOD-DONE");
    });
  });

  test("snapshots cut a flood of output exactly (no byte lost or doubled), another pane busy too", async () => {
    await withClient(async (client) => {
      const counter = 'i=0; while :; do i=$((i+1)); echo "L$i"; done';
      const busy = await client.newWindow({
        tag: "busy",
        name: "n",
        cwd: tempDir(),
        command: ["sh", "-c", counter],
      });
      const pane = await client.newWindow({
        tag: "t",
        name: "n",
        cwd: tempDir(),
        command: ["sh", "-c", counter],
      });
      // The counter has filled the screen before the first cut (a busy machine starts sh late):
      // every snapshot then holds a full screen of lines to check the seam against.
      await eventually(async () => {
        const shown = (await client.capturePane(pane.paneId)).match(/L(\d+)/g) ?? [];
        expect(shown.length).toBeGreaterThan(39);
      }, 15_000);
      // Two viewers: each gets every snapshot, its own or the other's, and must stay exact.
      const streams: PaneOutputEvent[][] = [[], []];
      const offs = streams.map((events) => client.watchOutput(pane.paneId, (e) => events.push(e)));
      // Each cut lands in a running flood: it is asked for while output streams, and the next
      // waits until every viewer has it and two more lines after it (a loaded machine may starve
      // the counter for longer than any fixed pause), so each seam has lines on both sides.
      for (let n = 1; n <= 4; n++) {
        void client.snapshotPane(pane.paneId);
        await eventually(() => {
          for (const events of streams) {
            expect(events.filter((e) => e.type === "snapshot")).toHaveLength(n);
            expect(newlinesAfterLastSnapshot(events)).toBeGreaterThanOrEqual(2);
          }
        }, 15_000);
      }
      for (const off of offs) off();
      await client.killWindow(busy.windowId);
      await client.killWindow(pane.windowId);
      for (const events of streams) {
        const snapshots = events.flatMap((e, i) => (e.type === "snapshot" ? [i] : []));
        expect(snapshots.length).toBe(4);
        for (const [n, at] of snapshots.entries()) {
          // The snapshot, then the bytes after it (up to the next snapshot), played on it.
          const snapshot = (events[at] as Extract<PaneOutputEvent, { type: "snapshot" }>).snapshot;
          const after = events.slice(at + 1, snapshots[n + 1] ?? events.length);
          const bytes = after.flatMap((e) => (e.type === "bytes" ? [e.bytes] : []));
          const rows = play(snapshot.lines, snapshot.cursor, Buffer.concat(bytes).toString("latin1"));
          const numbers = rows
            .filter((row) => row !== "")
            .slice(0, -1)
            .map((row) => Number(row.slice(1)));
          expect(numbers.length).toBeGreaterThan(39);
          // Consecutive across the seam: each line is the one before plus one.
          const breaks = numbers.flatMap((v, i) =>
            i > 0 && v !== numbers[i - 1]! + 1 ? [[numbers[i - 1], v]] : [],
          );
          expect(breaks).toEqual([]);
        }
      }
      expect(client.outputListeners()).toBe(0);
    });
  });

  test("a snapshot reports the alternate screen with the normal one under it, and the modes", async () => {
    await withClient(async (client) => {
      const modes =
        "\\033[?1049h\\033[Halt screen\\033[?25l\\033[?1h\\033=\\033[?1002h\\033[?1006h\\033[5;20r";
      const script = `printf 'normal text\\n'; printf '${modes}'; exec sleep 600`;
      const pane = await client.newWindow({
        tag: "t",
        name: "n",
        cwd: tempDir(),
        command: ["sh", "-c", script],
      });
      await eventually(async () =>
        expect((await client.snapshotPane(pane.paneId)).modes.alternateScreen).toBe(true),
      );
      const snapshot = await client.snapshotPane(pane.paneId);
      expect(snapshot.lines[0]).toBe("alt screen");
      expect(snapshot.normalLines?.[0]).toBe("normal text");
      expect(snapshot.normalLines).toHaveLength(40);
      // DECSTBM homes the cursor.
      expect(snapshot.cursor).toEqual({ x: 0, y: 0, visible: false });
      expect(snapshot.modes).toEqual({
        alternateScreen: true,
        cursorKeys: true,
        keypad: true,
        insert: false,
        wrap: true,
        origin: false,
        scrollRegion: { top: 4, bottom: 19 },
        mouse: "button",
        mouseSgr: true,
        mouseUtf8: false,
      });
    });
  });

  test("many pipelined commands each resolve to their own reply", async () => {
    await withClient(async (client) => {
      const panes: TmuxPane[] = [];
      for (const i of [0, 1, 2]) {
        const command = ["sh", "-c", `echo MARK-${i}; exec sleep 600`];
        panes.push(await client.newWindow({ tag: `t${i}`, name: "n", cwd: tempDir(), command }));
      }
      await eventually(async () => {
        for (const [i, p] of panes.entries())
          expect(await client.capturePane(p.paneId)).toContain(`MARK-${i}`);
      });
      const picks = Array.from({ length: 600 }, (_, n) => n % 3);
      const results = await Promise.all(
        picks.map((i, n) => (n % 10 === 0 ? client.listPanes() : client.capturePane(panes[i]!.paneId))),
      );
      for (const [n, result] of results.entries()) {
        if (n % 10 === 0) expect((result as unknown[]).length).toBe(3);
        else {
          const i = picks[n]!;
          expect(result).toContain(`MARK-${i}`);
          expect(result).not.toContain(`MARK-${(i + 1) % 3}`);
        }
      }
    });
  });

  test("a 256 KiB paste arrives byte-exact in `cat > file`", async () => {
    await withClient(async (client, socket) => {
      const dir = tempDir();
      const [file, ready] = [join(dir, "pasted"), join(dir, "ready")];
      const command = ["sh", "-c", 'stty -echo; : > "$2"; exec cat > "$1"', "sh", file, ready];
      const pane = await client.newWindow({ tag: "t", name: "n", cwd: dir, command });
      await eventually(() => expect(existsSync(ready)).toBe(true));
      // A cooked terminal turns the paste's CRs back into LFs; lines stay under its 4 KiB limit.
      const alphabet = [..."abc xyz\tÄÖü é 日本語 🎉 $HOME ~user \"q\" 'q' \\ #{pane_id} ; { } %end 1 2 1"];
      let text = "";
      while (Buffer.byteLength(text) < 256 * 1024 - 300) {
        const length = Math.floor(Math.random() * 180);
        for (let i = 0; i < length; i++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
        text += "\n";
      }
      await client.paste(pane.paneId, text);
      const bytes = Buffer.byteLength(text);
      await eventually(() => expect(existsSync(file) && statSync(file).size).toBe(bytes), 15_000);
      expect(readFileSync(file, "utf8") === text).toBe(true);
      expect(cli(socket, "list-buffers")).toBe("");
    });
  });

  test("quoted arguments reach tmux unchanged (parser round trip through a buffer)", async () => {
    const socket = privateSocket();
    const conn = await openControlConnection({
      binary: "tmux",
      socket,
      configFile: null,
      startup: startupCommand(SESSION),
      onNotification: () => {},
      onClose: () => {},
    });
    const file = join(tempDir(), "buffer");
    const alphabet = [..."ab %x%if%{}#{;}$~\\\"' \t\n\r\x1b\x01\x7fé🎉-=@:{%1"];
    try {
      for (let n = 0; n < 300; n++) {
        let text = n % 3 === 0 ? "%" : n % 3 === 1 ? "~" : "";
        for (let i = Math.floor(Math.random() * 16); i > 0; i--) {
          text += alphabet[Math.floor(Math.random() * alphabet.length)];
        }
        if (text === "") continue;
        await conn.run(["set-buffer", "-b", "roundtrip", "--", text]);
        await conn.run(["save-buffer", "-b", "roundtrip", file]);
        expect(readFileSync(file, "utf8")).toBe(text);
      }
    } finally {
      await conn.close();
      killTmuxServer(socket);
    }
  });

  test("without tmux, start() fails clearly and health says why", async () => {
    const client = createControlTmux({
      socket: privateSocket(),
      session: SESSION,
      binary: "/nonexistent/tmux",
    });
    await expect(client.start()).rejects.toThrow(/tmux not found/);
    await expect(client.start()).rejects.toThrow(/tmux not found/);
    expect(client.health()).toEqual({ healthy: false, error: notFound("tmux", "/nonexistent/tmux") });
    expect(client.health().error).toMatch(
      /^tmux not found \(\/nonexistent\/tmux\); install it: .*install.* tmux$/,
    );
    await client.close();
    expect(client.health()).toEqual({ healthy: false, error: "closed" });
  });
});
