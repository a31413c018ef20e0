import { afterAll, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { listenersOf } from "../../src/host/index.ts";
import { createScreenshotService, type ScreenshotService } from "../../src/screenshot/index.ts";
import { screenshotRoutes } from "../../src/server/routes/screenshot.ts";
import { createLogger } from "../../src/shared/log.ts";
import { sampleSession, type TestApp, testApp } from "../helpers/app.ts";
import { freePort } from "../helpers/binary.ts";
import { chromiumPath } from "../helpers/browser.ts";
import { decodePng, type Png } from "../helpers/png.ts";
import { until } from "../helpers/until.ts";

/**
 * Real Chromium through the route, against pages served on loopback by this process: the
 * session's agent, as far as the kernel's socket table tells (listenersOf with this process as
 * the tree's root). tests/integration/screenshot-scope.test.ts runs it through ag's runtime.
 */

const html = (body: string) =>
  new Response(`<!doctype html><html><body style="margin:0;background:#0000ff">${body}</body></html>`, {
    headers: { "content-type": "text/html" },
  });

/** A non-loopback address of this machine, if it has one: a host that answers but is not allowed. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === "IPv4")?.address;

const outsideHits: string[] = [];
const outside = Bun.serve({
  port: 0,
  hostname: "0.0.0.0",
  fetch(request) {
    outsideHits.push(new URL(request.url).pathname);
    return html('<div style="width:100px;height:100px;background:#00ff00"></div>');
  },
});
const outsideUrl = `http://${outsideAddress}:${outside.port}`;

const site = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const url = new URL(request.url);
    switch (url.pathname) {
      case "/box":
        return html('<div style="width:300px;height:200px;background:#ff0000"></div>');
      case "/tall":
        return html('<div style="width:100px;height:2000px;background:#ff0000"></div>');
      case "/away":
        return Response.redirect(url.searchParams.get("to")!, 302);
      case "/leaky":
        return html(`<img src="${outsideUrl}/pixel.png"><iframe src="${outsideUrl}/frame"></iframe>`);
      case "/hang":
        await Bun.sleep(5_000);
        return html("late");
      default:
        return new Response("not found", { status: 404 });
    }
  },
});
const origin = `http://127.0.0.1:${site.port}`;

function logSink(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const logger = createLogger({
    level: "info",
    json: true,
    stream: { write: (line: string) => lines.push(line) } as never,
  });
  return { lines, logger };
}

function appWith(service: ScreenshotService): { app: TestApp; shoot(body: unknown): Promise<Response> } {
  let app: TestApp | undefined;
  app = testApp({
    supervise: false,
    plugins: [screenshotRoutes(service, { get: (id) => app!.sessions.get(id) })],
  });
  const session = sampleSession();
  app.repo.insert(session);
  return { app, shoot: (body) => app!.request("POST", `/v1/sessions/${session.id}/screenshot`, { body }) };
}

/** This process and its children are the session's agent. */
async function ours(id: string) {
  return listenersOf({ root: process.pid, mark: `SVC_SESSION_ID=${id}` });
}

function imageOf(shot: { mimeType: string; data: string }): Png {
  expect(shot.mimeType).toBe("image/png");
  return decodePng(Buffer.from(shot.data, "base64"));
}

async function png(response: Response): Promise<Png> {
  expect(response.status).toBe(200);
  return imageOf(await response.json());
}

const main = logSink();
const service = createScreenshotService({
  chromiumPath: chromiumPath(),
  allowHosts: [],
  logger: main.logger,
  servers: ours,
});
const { shoot } = appWith(service);

const quick = logSink();
const quickService = createScreenshotService({
  chromiumPath: chromiumPath(),
  allowHosts: outsideAddress ? [outsideAddress] : [],
  logger: quick.logger,
  servers: ours,
  timeoutMs: 1_000,
  idleMs: 300,
});

afterAll(async () => {
  await service.close();
  await quickService.close();
  site.stop(true);
  outside.stop(true);
});

describe("captures through the route with real Chromium", () => {
  test("the PNG has the requested viewport size and shows the page", async () => {
    const image = await png(await shoot({ url: `${origin}/box`, width: 640, height: 360 }));
    expect([image.width, image.height]).toEqual([640, 360]);
    expect(image.pixel(10, 10)).toEqual([255, 0, 0]); // inside the 300x200 red box
    expect(image.pixel(299, 199)).toEqual([255, 0, 0]);
    expect(image.pixel(300, 100)).toEqual([0, 0, 255]); // just right of it: the blue page
    expect(image.pixel(639, 359)).toEqual([0, 0, 255]);
  });

  test("without a size: 1280x800", async () => {
    const image = await png(await shoot({ url: `http://localhost:${site.port}/box` }));
    expect([image.width, image.height]).toEqual([1280, 800]);
  });

  test("fullPage captures the whole scrollable page, taller than the viewport", async () => {
    const viewport = await png(await shoot({ url: `${origin}/tall`, width: 400, height: 300 }));
    expect([viewport.width, viewport.height]).toEqual([400, 300]);
    const whole = await png(await shoot({ url: `${origin}/tall`, width: 400, height: 300, fullPage: true }));
    expect([whole.width, whole.height]).toEqual([400, 2000]);
    expect(whole.pixel(50, 1990)).toEqual([255, 0, 0]);
    expect(whole.pixel(150, 1990)).toEqual([0, 0, 255]);
  });

  test("one browser serves every capture", () => {
    expect(main.lines.filter((l) => l.includes("screenshot browser started")).length).toBe(1);
  });

  test("a port nobody listens on is no server of the session → 403 SCREENSHOT_TARGET_DENIED", async () => {
    const response = await shoot({ url: `http://127.0.0.1:${freePort()}/` });
    expect(response.status).toBe(403);
    expect((await response.json()).code).toBe("SCREENSHOT_TARGET_DENIED");
  });

  test("an allowed port whose server is gone → 400 saying the connection was refused", async () => {
    const port = freePort();
    const allowed = createScreenshotService({
      chromiumPath: chromiumPath(),
      allowHosts: [`127.0.0.1:${port}`],
      logger: main.logger,
      servers: ours,
    });
    try {
      const error = await allowed.capture("s", { url: `http://127.0.0.1:${port}/` }).catch((e) => e);
      expect(error.code).toBe("VALIDATION_ERROR");
      expect(error.message).toContain("net::ERR_CONNECTION_REFUSED");
    } finally {
      await allowed.close();
    }
  });
});

describe.skipIf(!outsideAddress)(
  "the browser reaches the session's servers and the allowed hosts only",
  () => {
    test("a redirect to another host → 403, and that host sees no request", async () => {
      outsideHits.length = 0;
      const to = encodeURIComponent(`${outsideUrl}/secret`);
      const response = await shoot({ url: `${origin}/away?to=${to}` });
      expect(response.status).toBe(403);
      const body = await response.json();
      expect(body.code).toBe("SCREENSHOT_TARGET_DENIED");
      expect(body.error).toContain(
        "led to a URL that is neither a server of the session nor in SVC_SCREENSHOT_ALLOW_HOSTS",
      );
      expect(outsideHits).toEqual([]);
    });

    test("images and frames from another host are not fetched; the page is still captured", async () => {
      outsideHits.length = 0;
      const image = await png(await shoot({ url: `${origin}/leaky`, width: 320, height: 240 }));
      expect(image.width).toBe(320);
      expect(outsideHits).toEqual([]);
    });

    test("a host in the allow list is loaded, directly or through a redirect", async () => {
      outsideHits.length = 0;
      const image = imageOf(
        await quickService.capture("s", { url: `${outsideUrl}/ok`, width: 200, height: 150 }),
      );
      expect(image.pixel(10, 10)).toEqual([0, 255, 0]);
      const to = encodeURIComponent(`${outsideUrl}/via`);
      await quickService.capture("s", { url: `${origin}/away?to=${to}`, width: 200, height: 150 });
      expect(outsideHits.filter((path) => path !== "/favicon.ico")).toEqual(["/ok", "/via"]);
    });
  },
);

describe("load bound and browser lifetime", () => {
  test("a page that does not load in time → 400 VALIDATION_ERROR, not a 500", async () => {
    const started = performance.now();
    const error = await quickService.capture("s", { url: `${origin}/hang` }).catch((e) => e);
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toBe(`${origin}/hang did not load within 1 s`);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  test("the browser closes after the idle time and starts again for the next capture", async () => {
    await quickService.capture("s", { url: `${origin}/box`, width: 200, height: 200 });
    const startsBefore = quick.lines.filter((l) => l.includes("screenshot browser started")).length;
    // The browser that took this capture started at the last "started" line; an earlier one may
    // have closed (idle) before it: the close waited for comes after that line.
    const started = quick.lines.findLastIndex((l) => l.includes("screenshot browser started"));
    const closedSince = () =>
      quick.lines.slice(started + 1).some((l) => l.includes("screenshot browser closed (idle)"));
    // Idle 300 ms, then closed; on a busy machine the close itself may take a while longer.
    await until(closedSince, 10_000);
    const image = imageOf(await quickService.capture("s", { url: `${origin}/box`, width: 200, height: 200 }));
    expect(image.pixel(5, 5)).toEqual([255, 0, 0]);
    expect(quick.lines.filter((l) => l.includes("screenshot browser started")).length).toBe(startsBefore + 1);
  });

  test("close() ends the browser", async () => {
    await quickService.close();
    expect(quick.lines.at(-1)).toContain("screenshot browser closed (dispose)");
  });
});

describe("a Chromium that does not start", () => {
  test("an executable that is not a browser → 501, and the next capture tries again", async () => {
    // The real launcher (playwright-core) against a program that exits at once.
    const broken = createScreenshotService({
      chromiumPath: "/bin/true",
      allowHosts: [],
      logger: logSink().logger,
      servers: ours,
    });
    for (let i = 0; i < 2; i++) {
      const error = await broken.capture("s1", { url: `${origin}/box` }).catch((e) => e);
      expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
      expect(error.message).toStartWith("Chromium at /bin/true did not start: ");
    }
    await broken.close();
  });
});
