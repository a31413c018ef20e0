export {
  escapeTmuxFormat,
  isPaneId,
  isWindowId,
  quoteTmuxArg,
  tmuxArgv,
  tmuxCommandLine,
  windowCommand,
} from "./argv.ts";
export { DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_PASTE_BYTES } from "./commands.ts";
export { type ControlTmuxLogger, type ControlTmuxOptions, createControlTmux } from "./control.ts";
export { createTmuxProbe, type TmuxHealth, type TmuxProbe, type TmuxProbeOptions } from "./probe.ts";
export type {
  NewWindowOptions,
  PaneModes,
  PaneOutputEvent,
  PaneSnapshot,
  SplitWindowOptions,
  Tmux,
  TmuxEvent,
  TmuxHealthState,
  TmuxPane,
} from "./tmux.ts";
