import { Elysia } from "elysia";
import { Screenshot, ScreenshotInput, type ScreenshotService } from "../../screenshot/index.ts";
import type { SessionService } from "../../sessions/index.ts";
import { IdParams } from "./params.ts";

/** A screenshot of a session's work: a server its agent started on loopback, or an allowed host. */
export function screenshotRoutes(screenshots: ScreenshotService, sessions: Pick<SessionService, "get">) {
  return new Elysia({ name: "routes/screenshot" }).post(
    "/v1/sessions/:id/screenshot",
    ({ params, body }) => {
      sessions.get(params.id);
      return screenshots.capture(params.id, body);
    },
    {
      params: IdParams,
      body: ScreenshotInput,
      response: Screenshot,
      detail: {
        summary:
          "PNG of a server of the session's own processes (loopback) or an allowed host, in headless Chromium (default 1280x800); 403 SCREENSHOT_TARGET_DENIED for any other URL, 501 SCREENSHOT_UNAVAILABLE without Chromium",
      },
    },
  );
}
