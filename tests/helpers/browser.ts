import type { Browser } from "playwright-core";
import { CHROMIUM_ARGS, findChromium, launchChromium as launch } from "../../src/screenshot/index.ts";

/** Debian's Chromium (CI installs it), found as ag finds it; SVC_CHROMIUM_PATH points elsewhere. */
export function chromiumPath(): string {
  const found = findChromium(process.env.SVC_CHROMIUM_PATH || null);
  if (found.path === null) {
    throw new Error(`Chromium is needed for the browser tests: apt-get install chromium (${found.reason})`);
  }
  return found.path;
}

/** The machine has no network but loopback: the flags keep Chromium from reaching for Google's hosts. */
export function launchChromium(): Promise<Browser> {
  return launch(chromiumPath(), CHROMIUM_ARGS);
}
