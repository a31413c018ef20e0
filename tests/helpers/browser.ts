import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (CI installs it); SVC_CHROMIUM_PATH points elsewhere. */
export function chromiumPath(): string {
  const path = process.env.SVC_CHROMIUM_PATH || Bun.which("chromium") || Bun.which("chromium-browser");
  if (!path) throw new Error("Chromium is needed for the dashboard tests: apt-get install chromium");
  return path;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // The machine has no network but loopback: keep Chromium from reaching for Google's hosts.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
