import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import {
  escapeTmuxFormat,
  isPaneId,
  isWindowId,
  quoteTmuxArg,
  tmuxArgv,
  tmuxCommandLine,
  windowCommand,
} from "../../src/tmux/argv.ts";
import {
  captureCommand,
  checkLaunch,
  checkSplitTarget,
  findPlaceholder,
  MAX_PASTE_BYTES,
  newWindowCommand,
  paneTagCommand,
  parseDeath,
  parseNewWindow,
  parsePaneLine,
  parseSplit,
  pasteCommands,
  pasteText,
  sessionWindow,
  sizeCommand,
  splitLayoutCommands,
  splitWindowCommand,
} from "../../src/tmux/commands.ts";

describe("quoteTmuxArg", () => {
  test("plain tokens stay bare", () => {
    for (const token of ["send-keys", "-t", "%5", "@3", "=ag:", "C-c", "120x40", "/tmp/a.b,c+d"]) {
      expect(quoteTmuxArg(token)).toBe(token);
    }
  });

  test("the empty string is an empty quoted argument", () => {
    expect(quoteTmuxArg("")).toBe('""');
  });

  test("spaces, quotes, separators and braces are quoted", () => {
    expect(quoteTmuxArg("a b")).toBe('"a b"');
    expect(quoteTmuxArg("it's")).toBe(`"it's"`);
    expect(quoteTmuxArg('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoteTmuxArg("a;b")).toBe('"a;b"');
    expect(quoteTmuxArg("{x}")).toBe('"{x}"');
    expect(quoteTmuxArg("#{pane_id}")).toBe('"#{pane_id}"');
  });

  test("what tmux expands inside double quotes is escaped: backslash, $VAR, ~", () => {
    expect(quoteTmuxArg("a\\b")).toBe('"a\\\\b"');
    expect(quoteTmuxArg("$HOME")).toBe('"\\$HOME"');
    expect(quoteTmuxArg("~/x")).toBe('"\\~/x"');
  });

  test("newlines and control characters travel as escapes, never raw", () => {
    expect(quoteTmuxArg("a\nb\tc\rd")).toBe('"a\\nb\\tc\\rd"');
    expect(quoteTmuxArg("\x1b[201~")).toBe('"\\033[201\\~"');
    expect(quoteTmuxArg("\x01\x7f")).toBe('"\\001\\177"');
    expect(quoteTmuxArg("x\ny")).not.toContain("\n");
  });

  test("UTF-8 passes through unescaped", () => {
    expect(quoteTmuxArg("héllo 日本 🎉")).toBe('"héllo 日本 🎉"');
  });

  test("NUL is refused: tmux arguments are C strings", () => {
    expect(() => quoteTmuxArg("a\0b")).toThrow(/NUL/);
  });
});

describe("tmuxCommandLine", () => {
  test("joins quoted arguments into one line", () => {
    expect(tmuxCommandLine(["send-keys", "-t", "%1", "-l", "--", "a b\nc"])).toBe(
      'send-keys -t %1 -l -- "a b\\nc"',
    );
  });

  test("refuses an empty command", () => {
    expect(() => tmuxCommandLine([])).toThrow();
  });
});

describe("format and argv helpers", () => {
  test("escapeTmuxFormat doubles every #", () => {
    expect(escapeTmuxFormat("a #{pane_id} #(rm -rf ~) ##")).toBe("a ##{pane_id} ##(rm -rf ~) ####");
  });

  test("windowCommand keeps argv, and wraps a lone program so tmux does not hand it to sh -c", () => {
    expect(windowCommand(["claude", "--resume", "x y"])).toEqual(["claude", "--resume", "x y"]);
    expect(windowCommand(["/opt/my prog"])).toEqual(["/bin/sh", "-c", 'exec "$0"', "/opt/my prog"]);
    expect(() => windowCommand([])).toThrow();
  });

  test("ids and the private socket", () => {
    expect(isPaneId("%12")).toBe(true);
    expect(isPaneId("=ag:1")).toBe(false);
    expect(isWindowId("@3")).toBe(true);
    expect(isWindowId("@3.1")).toBe(false);
    expect(tmuxArgv("tmux", "ag", "ls")).toEqual(["tmux", "-L", "ag", "ls"]);
  });
});

describe("command builders and reply parsers", () => {
  const base = { tag: "s-1", name: "agent #{x}", cwd: tmpdir(), command: ["claude", "--model", "x y"] };

  test("new-window: detached, printing ids, names and cwd kept literal, env per -e, argv after --", () => {
    expect(newWindowCommand("=ag", { ...base, env: { A: "1 2", B: "$x" } })).toEqual([
      ...["new-window", "-d", "-P", "-F", "#{window_id}|#{pane_id}|#{pane_pid}", "-t", "=ag:"],
      ...["-n", "agent ##{x}", "-c", tmpdir(), "-e", "A=1 2", "-e", "B=$x", "--", "claude", "--model", "x y"],
    ]);
    expect(parseNewWindow("@3|%7|4242")).toEqual({ windowId: "@3", paneId: "%7", pid: 4242 });
    expect(() => parseNewWindow("")).toThrow();
    expect(sizeCommand("@3", base)).toEqual(["resize-window", "-t", "@3", "-x", "120", "-y", "40"]);
    expect(sizeCommand("@3", { ...base, width: 80, height: 24 })).toEqual([
      "resize-window",
      "-t",
      "@3",
      "-x",
      "80",
      "-y",
      "24",
    ]);
  });

  test("new-window requests tmux would mangle are refused", () => {
    expect(() => checkLaunch(base)).not.toThrow();
    expect(() => checkLaunch({ ...base, tag: "a\nb" })).toThrow(/tag/);
    expect(() => checkLaunch({ ...base, env: { "A-B": "1" } })).toThrow(/environment/);
    expect(() => checkLaunch({ ...base, command: [] })).toThrow(/command/);
    expect(() => checkLaunch({ ...base, cwd: "/no/such/dir" })).toThrow(/no such directory/);
  });

  test("split-window: into a window of ag's session, detached, printing ids and layout, launch as new-window", () => {
    const split = { tag: "child", cwd: tmpdir(), command: ["claude"], env: { A: "1" } };
    expect(sessionWindow("=ag", "@3")).toBe("=ag:@3");
    expect(() => sessionWindow("=ag", "3")).toThrow(/window id/);
    const format = "#{window_id}|#{pane_id}|#{pane_pid}|#{window_panes}|#{window_width}|#{window_height}";
    expect(splitWindowCommand("=ag:@3", split)).toEqual([
      ...["split-window", "-d", "-f", "-v", "-P", "-F", format, "-t", "=ag:@3"],
      ...["-c", tmpdir(), "-e", "A=1", "--", "/bin/sh", "-c", 'exec "$0"', "claude"],
    ]);
    expect(splitWindowCommand("=ag:@3", { ...split, horizontal: true })[3]).toBe("-h");
    expect(parseSplit("@3|%8|4243|2|120|40")).toEqual({
      windowId: "@3",
      paneId: "%8",
      pid: 4243,
      panes: 2,
      width: 120,
      height: 40,
    });
    expect(() => parseSplit("")).toThrow();
    expect(paneTagCommand("%8", "-x")).toEqual([
      "set-option",
      "-p",
      "-t",
      "%8",
      "--",
      "@svc_session_id",
      "-x",
    ]);
    expect(() => checkSplitTarget("@0", ["1"])).toThrow(/placeholder/);
    expect(() => checkSplitTarget("@3", ["", ""])).not.toThrow();
  });

  test("a split window grows so that each pane keeps at least the requested size", () => {
    const split = { tag: "c", cwd: tmpdir(), command: ["x"] };
    const made = { windowId: "@3", paneId: "%8", pid: 1, panes: 2, width: 120, height: 40 };
    expect(splitLayoutCommands(made, split)).toEqual([
      ["resize-window", "-t", "@3", "-x", "120", "-y", "81"],
      ["select-layout", "-t", "@3", "even-vertical"],
    ]);
    expect(splitLayoutCommands({ ...made, panes: 3, height: 81 }, split)[0]).toEqual([
      "resize-window",
      "-t",
      "@3",
      "-x",
      "120",
      "-y",
      "122",
    ]);
    expect(splitLayoutCommands(made, { ...split, horizontal: true })).toEqual([
      ["resize-window", "-t", "@3", "-x", "241", "-y", "40"],
      ["select-layout", "-t", "@3", "even-horizontal"],
    ]);
    // Never shrinks: a window already larger keeps its size; a wider pane widens it.
    expect(splitLayoutCommands({ ...made, height: 200 }, { ...split, width: 150, height: 30 })[0]).toEqual([
      "resize-window",
      "-t",
      "@3",
      "-x",
      "150",
      "-y",
      "200",
    ]);
  });

  test("list-panes lines: the tag may hold the separator; dead panes have no pid; the placeholder is skipped", () => {
    expect(parsePaneLine("@1|%2|77|0||||a|b")).toEqual({
      windowId: "@1",
      paneId: "%2",
      pid: 77,
      tag: "|a|b",
      dead: false,
      deadStatus: null,
    });
    expect(parsePaneLine("@1|%2|77|1|3||s")).toMatchObject({ pid: null, dead: true, deadStatus: 3 });
    expect(parsePaneLine("@1|%2|77|1|||s")).toMatchObject({ dead: true, deadStatus: null });
    expect(parsePaneLine("@0|%0|5|0||1|")).toBeNull();
  });

  test("pane death is reported once tmux knows how the process ended", () => {
    expect(parseDeath("0  ")).toBeNull();
    expect(parseDeath("1  ")).toBe("unreaped");
    expect(parseDeath("1 3 ")).toEqual({ status: 3 });
    expect(parseDeath("1 0 ")).toEqual({ status: 0 });
    expect(parseDeath("1  9")).toEqual({ status: null });
  });

  test("the placeholder is found marked, found unmarked by name, or missing", () => {
    expect(findPlaceholder(["@0||s|ag-idle", "@1|1||ag-idle"])).toEqual({ windowId: "@1", marked: true });
    expect(findPlaceholder(["@2||s-1|agent", "@0|||ag-idle"])).toEqual({ windowId: "@0", marked: false });
    expect(findPlaceholder(["@2||s-1|ag-idle"])).toBeNull();
  });

  test("capture and paste", () => {
    expect(captureCommand("%1", {})).toEqual(["capture-pane", "-p", "-t", "%1"]);
    expect(captureCommand("%1", { escapes: true, historyLines: 200 })).toEqual([
      "capture-pane",
      "-p",
      "-e",
      "-S",
      "-200",
      "-t",
      "%1",
    ]);
    expect(pasteText("a\x1b[200~b\x1b[201~c")).toBe("abc");
    expect(() => pasteText("x".repeat(MAX_PASTE_BYTES + 1))).toThrow(/exceeds/);
    const { buffer, set, paste } = pasteCommands("%1", "text");
    expect(set).toEqual(["set-buffer", "-b", buffer, "--", "text"]);
    expect(paste).toEqual(["paste-buffer", "-p", "-d", "-b", buffer, "-t", "%1"]);
    expect(pasteCommands("%1", "x").buffer).not.toBe(buffer);
  });
});
