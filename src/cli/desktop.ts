import type { DesktopEnv } from "../config/load.ts";

/**
 * Opens a URL in the person's browser when there is a desktop to open it on: `open` on macOS,
 * `xdg-open` elsewhere. Over SSH or on a server without a display there is none, and the caller
 * just prints the link. The opener is left to run on its own: whether a browser came up is not
 * something to wait for.
 */
export function openInBrowser(
  url: string,
  desktop: Pick<DesktopEnv, "graphical">,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (!desktop.graphical) return false;
  const opener = Bun.which(platform === "darwin" ? "open" : "xdg-open");
  if (!opener) return false;
  try {
    const proc = Bun.spawn([opener, url], { stdio: ["ignore", "ignore", "ignore"], detached: true });
    proc.unref();
    return true;
  } catch {
    return false;
  }
}
