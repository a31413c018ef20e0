import { isPaneId, isWindowId } from "./argv.ts";
import {
  checkLaunch,
  checkSplitTarget,
  newWindowCommand,
  PANE_FORMAT,
  paneTagCommand,
  parseNewWindow,
  parsePaneLine,
  parseSplit,
  sessionWindow,
  sizeCommand,
  splitCheckCommand,
  splitLayoutCommands,
  splitWindowCommand,
} from "./commands.ts";
import type { NewWindowOptions, SplitWindowOptions, Tmux, TmuxPane } from "./tmux.ts";

export interface WindowDeps {
  run(args: string[]): Promise<string[]>;
  /** ag's session as a target, e.g. `=ag`. */
  target: string;
  /** A pane seen in a window: its pending signals are dropped when that window closes. */
  track(paneId: string, windowId: string): void;
  /** A pane killed: its pending signals are dropped now. */
  untrack(paneId: string): void;
}

export type WindowCommands = Pick<
  Tmux,
  "newWindow" | "splitWindow" | "listPanes" | "killWindow" | "killPane"
>;

/**
 * Making, listing and closing ag's windows and panes. A pane is made, then tagged (and sized):
 * makes are queued one after another and listPanes waits for them, so this client never lists a
 * pane half-made (a split pane not yet tagged would show its window's tag: its parent's).
 */
export function createWindowCommands(deps: WindowDeps): WindowCommands {
  const { run, target } = deps;
  let making: Promise<unknown> = Promise.resolve();

  function queue<T>(make: () => Promise<T>): Promise<T> {
    const made = making.then(make);
    making = made.catch(() => {});
    return made;
  }

  async function createWindow(o: NewWindowOptions): Promise<TmuxPane> {
    const { windowId, paneId, pid } = parseNewWindow((await run(newWindowCommand(target, o)))[0]);
    deps.track(paneId, windowId);
    // Pipelined: both lines are written before either answers.
    await Promise.all([
      run(["set-option", "-w", "-t", windowId, "--", "@svc_session_id", o.tag]),
      run(sizeCommand(windowId, o)),
    ]);
    return { windowId, paneId, pid, tag: o.tag, dead: false, deadStatus: null };
  }

  async function split(windowId: string, o: SplitWindowOptions): Promise<TmuxPane> {
    const window = sessionWindow(target, windowId);
    checkSplitTarget(windowId, await run(splitCheckCommand(window)));
    const made = parseSplit((await run(splitWindowCommand(window, o)))[0]);
    deps.track(made.paneId, made.windowId);
    // Pipelined: tag, grow, lay out (splitLayoutCommands says why the window grows).
    const results = await Promise.allSettled(
      [paneTagCommand(made.paneId, o.tag), ...splitLayoutCommands(made, o)].map((args) => run(args)),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (failed) {
      // Untagged, the pane would pass for its parent: better gone.
      await killPane(made.paneId).catch(() => {});
      throw failed.reason;
    }
    return {
      windowId: made.windowId,
      paneId: made.paneId,
      pid: made.pid,
      tag: o.tag,
      dead: false,
      deadStatus: null,
    };
  }

  async function killPane(paneId: string): Promise<void> {
    if (!isPaneId(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
    // The last pane takes its window along: tmux then reports %window-close (window-closed).
    await run(["kill-pane", "-t", paneId]).catch((error: Error) => {
      // Already gone (its window was killed, or another client killed it): done.
      if (!/can't find pane/.test(error.message)) throw error;
    });
    deps.untrack(paneId);
  }

  return {
    async newWindow(o) {
      checkLaunch(o);
      return queue(() => createWindow(o));
    },

    async splitWindow(windowId, o) {
      checkLaunch(o);
      sessionWindow(target, windowId);
      return queue(() => split(windowId, o));
    },

    async listPanes() {
      await making;
      const panes: TmuxPane[] = [];
      for (const line of await run(["list-panes", "-s", "-t", target, "-F", PANE_FORMAT])) {
        const pane = parsePaneLine(line);
        if (!pane) continue;
        deps.track(pane.paneId, pane.windowId);
        panes.push(pane);
      }
      return panes;
    },

    killPane,

    async killWindow(windowId) {
      if (!isWindowId(windowId)) throw new TypeError(`not a tmux window id: ${windowId}`);
      await run(["kill-window", "-t", windowId]).catch((error: Error) => {
        // Already gone (it exited and was closed, or another client killed it): done.
        if (!/can't find window/.test(error.message)) throw error;
      });
    },
  };
}
