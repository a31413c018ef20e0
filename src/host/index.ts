export {
  type Admission,
  createAdmission,
  DEFAULT_AGENT_BYTES,
  type MeasuredAgent,
  RETRY_AFTER_SECONDS,
  type Reservation,
} from "./admission.ts";
export { type AdmissionState, createHostGuard, type HostGuard, type RunningAgent } from "./guard.ts";
export { createPressureWatch, type PressureWatch } from "./pressure.ts";
export { availableBytes, type HostMemory } from "./procfs.ts";
export { programsUnder, type RunningProgram } from "./programs.ts";
export { type AdmissionQueue, createAdmissionQueue, type Waiting } from "./queue.ts";
export { type ListenerOwner, listenersOf, type OwnedListener } from "./sockets.ts";
export { createStrayReaper, type ProcessMark, type StrayReaper } from "./strays.ts";
export { createHostUsage, type HostUsage, type TreeUsage } from "./usage.ts";
