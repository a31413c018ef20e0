import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/index.ts";
import { networkLockArgs } from "../../src/screenshot/chromium.ts";
import {
  checkUrl,
  createScreenshotService,
  findChromium,
  isLoopbackHost,
  type ScreenshotService,
} from "../../src/screenshot/index.ts";
import { screenshotRoutes } from "../../src/server/routes/screenshot.ts";
import { AgError } from "../../src/shared/errors.ts";
import { createLogger } from "../../src/shared/log.ts";
import { sampleSession, type TestApp, testApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

const logger = createLogger({ level: "silent", json: true });
/** A machine without Chromium: the lookup finds nothing, whatever is really installed. */
const nothingOnPath = () => null;
const noChromium = () =>
  createScreenshotService({ chromiumPath: null, allowHosts: [], logger, which: nothingOnPath });

async function thrown(run: () => Promise<unknown>): Promise<AgError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    return error as AgError;
  }
  throw new Error("expected an AgError");
}

describe("URL rules", () => {
  test("loopback URLs pass, in any of their spellings", () => {
    for (const url of [
      "http://localhost:3000/app?x=1",
      "https://LOCALHOST/",
      "http://localhost./",
      "http://127.0.0.1:8080/",
      "http://127.1/",
      "http://0x7f.0.0.1/",
      "http://127.255.0.9/",
      "http://[::1]:5173/",
    ]) {
      expect(checkUrl(url, []).href).toStartWith("http");
    }
  });

  test("any other host is refused, naming the host", () => {
    for (const [url, host] of [
      ["http://example.com/", "example.com"],
      ["http://10.0.0.1:80/", "10.0.0.1"],
      ["http://169.254.169.254/latest/meta-data", "169.254.169.254"],
      ["http://localhost.evil.test/", "localhost.evil.test"],
      ["http://127.0.0.1.nip.io/", "127.0.0.1.nip.io"],
      ["http://0.0.0.0:3000/", "0.0.0.0"],
      ["http://[fd00::1]/", "fd00::1"],
    ] as const) {
      let error: unknown;
      try {
        checkUrl(url, []);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AgError);
      expect((error as AgError).code).toBe("VALIDATION_ERROR");
      expect((error as AgError).message).toContain(`host "${host}" is not allowed`);
      expect((error as AgError).message).toContain("SVC_SCREENSHOT_ALLOW_HOSTS");
    }
  });

  test("hosts in the allow list pass, compared without case or brackets", () => {
    const allow = ["Preview.Example.test", "[fd00::7]", "10.1.2.3"];
    expect(checkUrl("https://preview.example.test/x", allow).hostname).toBe("preview.example.test");
    expect(checkUrl("http://[fd00::7]:8080/", allow).port).toBe("8080");
    expect(checkUrl("http://10.1.2.3/", allow).hostname).toBe("10.1.2.3");
    expect(() => checkUrl("http://other.example.test/", allow)).toThrow('host "other.example.test"');
  });

  test("only http and https", () => {
    expect(() => checkUrl("file:///etc/passwd", [])).toThrow("url must be http or https, not file");
    expect(() => checkUrl("javascript:alert(1)", [])).toThrow("not javascript");
    expect(() => checkUrl("ws://localhost/", [])).toThrow("not ws");
    expect(() => checkUrl("localhost:3000", [])).toThrow("url must be http or https");
    expect(() => checkUrl("not a url", [])).toThrow('url is not a valid URL: "not a url"');
  });

  test("isLoopbackHost covers localhost, 127.0.0.0/8 and ::1 only", () => {
    expect(["localhost", "127.0.0.1", "127.9.8.7", "::1", "[::1]"].every(isLoopbackHost)).toBe(true);
    expect(["128.0.0.1", "localhost.test", "::", "0.0.0.0", "::2"].some(isLoopbackHost)).toBe(false);
  });
});

describe("sizes and options", () => {
  const service = noChromium();

  test.each([
    [{ width: 99 }, "width must be an integer from 100 to 4096 (got 99)"],
    [{ width: 4097 }, "width must be an integer from 100 to 4096 (got 4097)"],
    [{ height: 99.5 }, "height must be an integer from 100 to 4096 (got 99.5)"],
    [{ height: "800" }, 'height must be an integer from 100 to 4096 (got "800")'],
    [{ fullPage: "yes" }, 'fullPage must be true or false (got "yes")'],
  ])("%p → 400: %s", async (extra, message) => {
    const error = await thrown(() => service.capture({ url: "http://localhost/", ...(extra as object) }));
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe(message);
  });

  test("the bounds themselves are valid: the request gets as far as looking for Chromium", async () => {
    for (const size of [{ width: 100, height: 4096 }, { width: 4096, height: 100 }, {}]) {
      const error = await thrown(() =>
        service.capture({ url: "http://127.0.0.1:1/", fullPage: true, ...size }),
      );
      expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
    }
  });

  test("the URL is checked before Chromium is looked for", async () => {
    const error = await thrown(() => service.capture({ url: "http://example.com/" }));
    expect(error.code).toBe("VALIDATION_ERROR");
  });
});

describe("without Chromium", () => {
  test("capture → 501 SCREENSHOT_UNAVAILABLE naming what was looked for; available() is false", async () => {
    const service = noChromium();
    expect(await service.available()).toBe(false);
    const error = await thrown(() => service.capture({ url: "http://localhost:3000/" }));
    expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
    expect(error.statusCode).toBe(501);
    expect(error.message).toContain("chromium, chromium-browser, google-chrome");
    expect(error.message).toContain("SVC_CHROMIUM_PATH");
    await service.close();
  });

  test("looks on PATH for chromium, then chromium-browser, then google-chrome", () => {
    const asked: string[] = [];
    const which = (command: string) => {
      asked.push(command);
      return command === "google-chrome" ? "/opt/google/chrome" : null;
    };
    expect(findChromium(null, which)).toEqual({ path: "/opt/google/chrome" });
    expect(asked).toEqual(["chromium", "chromium-browser", "google-chrome"]);
  });

  test("a configured path that is not an executable file is not replaced by one on PATH", async () => {
    const missing = `${tempDir()}/chromium`;
    const service = createScreenshotService({
      chromiumPath: missing,
      allowHosts: [],
      logger,
      which: () => "/usr/bin/chromium",
    });
    expect(await service.available()).toBe(false);
    const error = await thrown(() => service.capture({ url: "http://localhost/" }));
    expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
    expect(error.message).toBe(`SVC_CHROMIUM_PATH is ${missing}, which is not an executable file`);
  });

  test("a configured program name is looked up on PATH", async () => {
    const which = (command: string) => (command === "chrome-beta" ? "/opt/beta/chrome" : null);
    expect(findChromium("chrome-beta", which)).toEqual({ path: "/opt/beta/chrome" });
    expect(findChromium("chrome-nightly", which)).toEqual({
      path: null,
      reason: "SVC_CHROMIUM_PATH is chrome-nightly, which is not on PATH",
    });
    const service = createScreenshotService({ chromiumPath: "chrome-beta", allowHosts: [], logger, which });
    expect(await service.available()).toBe(true);
  });

  test("an executable that is not a browser → 501, and the next capture tries again", async () => {
    // The real launcher (playwright-core) against a program that exits at once.
    const service = createScreenshotService({ chromiumPath: "/bin/true", allowHosts: [], logger });
    for (let i = 0; i < 2; i++) {
      const error = await thrown(() => service.capture({ url: "http://localhost/" }));
      expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
      expect(error.message).toStartWith("Chromium at /bin/true did not start: ");
    }
    await service.close();
  });
});

test("the browser's network is locked to loopback and the allowed hosts", () => {
  const args = networkLockArgs(["Preview.test", "fd00::7", "[fd00::8]"]);
  expect(args).toContain("--proxy-server=http://127.0.0.1:1");
  expect(args).toContain(
    "--proxy-bypass-list=<-loopback>;localhost;127.0.0.0/8;[::1];preview.test;[fd00::7];[fd00::8]",
  );
});

describe("settings", () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ env, home: tempDir(), cwd: tempDir(), containerRoot: tempDir() });

  test("default: Chromium from PATH, loopback only", () => {
    const { config } = load({});
    expect(config.chromiumPath).toBeNull();
    expect(config.screenshotAllowHosts).toEqual([]);
  });

  test("SVC_CHROMIUM_PATH and a comma-separated SVC_SCREENSHOT_ALLOW_HOSTS", () => {
    const { config, sources } = load({
      SVC_CHROMIUM_PATH: "/opt/chromium/chrome",
      SVC_SCREENSHOT_ALLOW_HOSTS: " preview.test, ,10.0.0.5,[fd00::1] ",
    });
    expect(config.chromiumPath).toBe("/opt/chromium/chrome");
    expect(config.screenshotAllowHosts).toEqual(["preview.test", "10.0.0.5", "[fd00::1]"]);
    expect(sources.screenshotAllowHosts).toBe("environment (SVC_SCREENSHOT_ALLOW_HOSTS)");
  });

  test("a host with a path, a scheme or a separator in it stops start-up", () => {
    for (const bad of ["http://preview.test", "a.test/x", "a.test;b.test"]) {
      expect(() => load({ SVC_SCREENSHOT_ALLOW_HOSTS: bad })).toThrow(
        "invalid screenshotAllowHosts.0 from environment (SVC_SCREENSHOT_ALLOW_HOSTS)",
      );
    }
  });
});

describe("POST /v1/sessions/:id/screenshot", () => {
  function appWith(service: ScreenshotService): TestApp {
    // The plugin needs the app's session service, which testApp builds: bind it late.
    let app: TestApp | undefined;
    const routes = screenshotRoutes(service, { get: (id) => app!.sessions.get(id) });
    app = testApp({ supervise: false, plugins: [routes] });
    return app;
  }
  const app = appWith(noChromium());
  const session = sampleSession();
  app.repo.insert(session);
  const shoot = (body: unknown, id = session.id) =>
    app.request("POST", `/v1/sessions/${id}/screenshot`, { body });

  test("an unknown session → 404 SESSION_NOT_FOUND", async () => {
    const response = await shoot({ url: "http://localhost/" }, "nope");
    expect(response.status).toBe(404);
    expect((await response.json()).code).toBe("SESSION_NOT_FOUND");
  });

  test("without Chromium → 501 SCREENSHOT_UNAVAILABLE in the error envelope", async () => {
    const response = await shoot({ url: "http://localhost:3000/" });
    expect(response.status).toBe(501);
    const body = await response.json();
    expect(body).toMatchObject({ code: "SCREENSHOT_UNAVAILABLE", statusCode: 501 });
    expect(body.error).toContain("SVC_CHROMIUM_PATH");
  });

  test("a non-loopback URL → 400 naming the host", async () => {
    const response = await shoot({ url: "http://internal.example:8080/" });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.error).toContain('host "internal.example" is not allowed');
  });

  test("the body schema: sizes 100–4096, fullPage a boolean, url required", async () => {
    for (const body of [
      { url: "http://localhost/", width: 50 },
      { url: "http://localhost/", height: 5000 },
      { url: "http://localhost/", width: 640.5 },
      { url: "http://localhost/", fullPage: "yes" },
      { width: 640 },
    ]) {
      const response = await shoot(body);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("VALIDATION_ERROR");
    }
    const response = await shoot({ url: "http://localhost/", width: 50 });
    expect((await response.json()).error).toStartWith("invalid body.width");
  });

  test("is documented in the OpenAPI document with its body schema", async () => {
    const doc = await (await app.request("GET", "/v1/openapi.json")).json();
    const operation = doc.paths["/v1/sessions/{id}/screenshot"].post;
    const schema = operation.requestBody.content["application/json"].schema;
    expect(schema.required).toEqual(["url"]);
    expect(schema.properties.width).toMatchObject({ minimum: 100, maximum: 4096, default: 1280 });
  });
});
