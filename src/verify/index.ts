export { readProject } from "./project.ts";
export { type CommandOutcome, type CommandRun, OUTPUT_LIMIT, type RunCommand, runCommand } from "./runner.ts";
export {
  createVerificationService,
  type VerificationService,
  type VerificationServiceDeps,
  type VerificationSettings,
  type VerifyOptions,
} from "./service.ts";
export { DEFAULT_TIMEOUTS, type StepTimeouts } from "./steps.ts";
export {
  STEP_NAMES,
  type StepName,
  VerificationResult,
  VerificationStep,
  VerifyInput,
} from "./verification.ts";
