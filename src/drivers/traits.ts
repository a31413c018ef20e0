import type { DriverName } from "../agents/agent.ts";

/**
 * What each driver can do, known without one running. A plain module (the dashboard bundle
 * imports it as it is): a terminal has a pane to read and type into, split panes and attach;
 * fork and resume can work where the agent can.
 */
export const DRIVER_TRAITS: Record<DriverName, { terminal: boolean; continues: boolean }> = {
  tmux: { terminal: true, continues: true },
  /** No terminal; fork and resume not yet. */
  acp: { terminal: false, continues: false },
};
