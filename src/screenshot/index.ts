export { CHROMIUM_ARGS, CHROMIUM_COMMANDS, findChromium, type Launch, launchChromium } from "./chromium.ts";
export { Screenshot, ScreenshotInput } from "./screenshot.ts";
export {
  createScreenshotService,
  IDLE_CLOSE_MS,
  LOAD_TIMEOUT_MS,
  type ScreenshotService,
  type ScreenshotServiceDeps,
} from "./service.ts";
export {
  type AllowEntry,
  admit,
  checkUrl,
  isLoopbackHost,
  type Listening,
  parseAllowEntry,
} from "./target.ts";
