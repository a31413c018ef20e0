import { type Static, Type } from "@sinclair/typebox";

/** CONTRACT §8: what a caller asks for and what it gets back. */

export const MIN_SIZE = 100;
export const MAX_SIZE = 4096;
export const DEFAULT_WIDTH = 1280;
export const DEFAULT_HEIGHT = 800;

const Size = (fallback: number, what: string) =>
  Type.Integer({ minimum: MIN_SIZE, maximum: MAX_SIZE, default: fallback, description: what });

export const ScreenshotInput = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      description:
        "http(s) URL of a server the session's processes listen on (loopback), or of a host in SVC_SCREENSHOT_ALLOW_HOSTS",
    }),
    width: Type.Optional(Size(DEFAULT_WIDTH, "viewport width in CSS pixels")),
    height: Type.Optional(Size(DEFAULT_HEIGHT, "viewport height in CSS pixels")),
    fullPage: Type.Optional(
      Type.Boolean({
        default: false,
        description: "capture the whole scrollable page, not just the viewport",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ScreenshotInput = Static<typeof ScreenshotInput>;

export const Screenshot = Type.Object({
  mimeType: Type.Literal("image/png"),
  data: Type.String({ description: "the PNG, base64" }),
});
export type Screenshot = Static<typeof Screenshot>;
