/**
 * An AbortSignal that Ctrl+C (SIGINT) fires instead of killing the process, so a following
 * command can stop reading, say so, and exit 0. `release` puts the default behaviour back.
 */
export function abortOnInterrupt(): { signal: AbortSignal; interrupted(): boolean; release(): void } {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  return {
    signal: controller.signal,
    interrupted: () => interrupted,
    release: () => void process.off("SIGINT", onSignal),
  };
}
