import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { Screenshot, ScreenshotInput, type ScreenshotService } from "../../screenshot/index.ts";
import type { SessionService } from "../../sessions/index.ts";

const Id = Type.Object({ id: Type.String() });

/** A screenshot for a session's work: e.g. the dev server its agent started on loopback. */
export function screenshotRoutes(screenshots: ScreenshotService, sessions: Pick<SessionService, "get">) {
  return new Elysia({ name: "routes/screenshot" }).post(
    "/v1/sessions/:id/screenshot",
    ({ params, body }) => {
      sessions.get(params.id);
      return screenshots.capture(body);
    },
    {
      params: Id,
      body: ScreenshotInput,
      response: Screenshot,
      detail: {
        summary:
          "PNG of a loopback URL in headless Chromium (default 1280x800); 501 SCREENSHOT_UNAVAILABLE without Chromium",
      },
    },
  );
}
