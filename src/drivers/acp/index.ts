/** The ACP session driver: headless agents as child processes of ag, over the Agent Client Protocol. */
export {
  type AcpDriver,
  createAcpDriver,
  type DriverSink,
  type HeadlessSpec,
  type PermissionChoice,
  type Reopened,
  TRANSCRIPT_FILE,
} from "./driver.ts";
export { acpTranscript, acpTranscriptFormat, createAcpTranscriptReader } from "./transcript.ts";
