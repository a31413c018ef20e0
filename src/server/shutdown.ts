import type { Logger } from "../shared/log.ts";

export interface ShutdownOptions {
  graceMs: number;
  hardMs: number;
  /** Stops the HTTP server, draining for up to graceMs; resolves true when it drained in time. */
  drain(graceMs: number): Promise<boolean>;
  /** Releases everything else (database, lock file). Agent windows are never touched. */
  close(): Promise<void> | void;
  exit(code: number): void;
  logger: Logger;
}

/**
 * SIGTERM/SIGINT: stop accepting, drain within the grace period, close, exit 0. If the whole
 * shutdown passes the hard cap, or a second signal arrives, exit 1 at once.
 */
export function createShutdown(options: ShutdownOptions): (signal: string) => Promise<void> {
  let started = false;
  return async (signal) => {
    if (started) {
      options.logger.warn(`${signal} again: exiting now`);
      options.exit(1);
      return;
    }
    started = true;
    options.logger.info(`${signal} received: draining requests for up to ${options.graceMs} ms`);
    const hard = setTimeout(() => {
      options.logger.error(`shutdown took longer than ${options.hardMs} ms: exiting with code 1`);
      options.exit(1);
    }, options.hardMs);
    hard.unref?.();
    try {
      const drained = await options.drain(options.graceMs);
      if (!drained) options.logger.warn("grace period over: closed the connections still open");
      await options.close();
      clearTimeout(hard);
      options.logger.info("stopped; agent sessions keep running");
      options.exit(0);
    } catch (error) {
      clearTimeout(hard);
      options.logger.error("shutdown failed", error);
      options.exit(1);
    }
  };
}
