import type { DriverName } from "../agents/vocabulary.ts";

/**
 * What each driver can do, known without one running. A plain module (the dashboard bundle
 * imports it as it is): a terminal has a pane to read and type into, split panes and attach;
 * fork and resume can work where the agent can.
 */
export const DRIVER_TRAITS: Record<DriverName, DriverTraits> = {
  tmux: { terminal: true, continues: true, transcript: "agent" },
  /** No terminal; fork and resume not yet; ag writes the transcript of the protocol. */
  acp: { terminal: false, continues: false, transcript: "ag" },
};

export interface DriverTraits {
  /** A pane to read and type into (screen, keys, split panes, attach). */
  terminal: boolean;
  /** Fork and resume can work (where the agent can). */
  continues: boolean;
  /** Whose file the transcript is: the agent's own, or ag's record of the protocol. */
  transcript: "agent" | "ag";
}
