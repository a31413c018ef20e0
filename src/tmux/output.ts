import { isPaneId } from "./argv.ts";
import { sendBytesCommands } from "./commands.ts";
import { decodeOutputData } from "./framing.ts";
import { parseSnapshot, snapshotCommands } from "./snapshot.ts";
import type { PaneOutputEvent, PaneSnapshot, Tmux } from "./tmux.ts";

export interface PaneOutputDeps {
  run(args: string[]): Promise<string[]>;
  runTogether(commands: string[][]): Array<Promise<string[]>>;
  /** Signals the pane changed (its coalesced pane-output event). */
  changed(paneId: string): void;
  logError(message: string, error: unknown): void;
}

export type PaneOutput = Pick<Tmux, "watchOutput" | "outputListeners" | "snapshotPane" | "sendBytes"> & {
  /** One `%output` notification, still escaped: decoded only when the pane has listeners. */
  deliver(paneId: string, escaped: Uint8Array): void;
};

type Listener = (event: PaneOutputEvent) => void;

interface Flight {
  /** The snapshot being taken. */
  running: Promise<PaneSnapshot>;
  /** Asked for while `running` was under way: one more, taken after it. */
  next: Promise<PaneSnapshot> | null;
}

/**
 * The control client's pane output for viewers (the live terminal): the bytes of watched panes,
 * snapshots placed exactly among them, and keyboard bytes back into a pane.
 *
 * Where a snapshot falls: it pauses this client's output of the pane (tmux drops what it has not
 * sent: it is on the screen anyway), and the pause's reply comes after every byte sent before it.
 * Then the capture and the continue go in one write, which tmux runs with no pane read between
 * them: bytes after the continue are exactly those the capture lacks. They may reach us before
 * the capture's reply (tmux interleaves panes' output with replies), so they are held until the
 * snapshot has been handed to the listeners.
 */
export function createPaneOutput(deps: PaneOutputDeps): PaneOutput {
  const listeners = new Map<string, Set<Listener>>();
  /** Panes whose output is held: a snapshot has cut it and is not delivered yet. */
  const held = new Map<string, Uint8Array[]>();
  const flights = new Map<string, Flight>();

  function emit(paneId: string, event: PaneOutputEvent): void {
    for (const listener of listeners.get(paneId) ?? []) {
      try {
        listener(event);
      } catch (error) {
        deps.logError(`output listener of ${paneId} failed`, error);
      }
    }
  }

  async function take(paneId: string): Promise<PaneSnapshot> {
    const { pause, together } = snapshotCommands(paneId);
    try {
      await deps.run(pause);
    } catch (error) {
      // The pause may still be run by tmux after we gave up on it: a pane left paused would send
      // ag no more output (its screen-based state detection included). Continue, at worst twice.
      deps.run(together.at(-1)!).catch(() => {});
      throw error;
    }
    held.set(paneId, []);
    try {
      const results = await Promise.allSettled(deps.runTogether(together));
      const failed = results.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
      const [info, screen, normal] = results.map((r) => (r as PromiseFulfilledResult<string[]>).value);
      const snapshot = parseSnapshot(info![0], screen!, normal!);
      emit(paneId, { type: "snapshot", snapshot });
      return snapshot;
    } finally {
      const bytes = held.get(paneId) ?? [];
      held.delete(paneId);
      for (const chunk of bytes) emit(paneId, { type: "bytes", bytes: chunk });
      // Output while paused reached nobody, so its change signal neither: say it now.
      deps.changed(paneId);
    }
  }

  /** One snapshot at a time per pane (one's continue must not end another's pause). */
  function snapshot(paneId: string): Promise<PaneSnapshot> {
    const flight = flights.get(paneId);
    if (flight) {
      flight.next ??= flight.running.catch(() => {}).then(() => start(paneId));
      return flight.next;
    }
    return start(paneId);
  }

  function start(paneId: string): Promise<PaneSnapshot> {
    const flight: Flight = { running: take(paneId), next: null };
    flights.set(paneId, flight);
    void flight.running
      .catch(() => {})
      .then(() => {
        if (flights.get(paneId) === flight && flight.next === null) flights.delete(paneId);
      });
    return flight.running;
  }

  return {
    deliver(paneId, escaped) {
      if (!listeners.has(paneId)) return;
      const bytes = decodeOutputData(escaped);
      const holding = held.get(paneId);
      if (holding) holding.push(bytes);
      else emit(paneId, { type: "bytes", bytes });
    },

    watchOutput(paneId, listener) {
      if (!isPaneId(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
      const set = listeners.get(paneId) ?? new Set<Listener>();
      listeners.set(paneId, set);
      const own: Listener = (event) => listener(event);
      set.add(own);
      return () => {
        set.delete(own);
        if (set.size === 0 && listeners.get(paneId) === set) listeners.delete(paneId);
      };
    },

    outputListeners: () => [...listeners.values()].reduce((n, set) => n + set.size, 0),

    snapshotPane(paneId) {
      if (!isPaneId(paneId)) return Promise.reject(new TypeError(`not a tmux pane id: ${paneId}`));
      return snapshot(paneId);
    },

    async sendBytes(paneId, bytes) {
      if (!isPaneId(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
      if (bytes.length === 0) return;
      // A long input is several commands: one write keeps them together in tmux's queue.
      await Promise.all(deps.runTogether(sendBytesCommands(paneId, bytes)));
    },
  };
}
