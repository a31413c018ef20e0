import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/index.ts";
import { contextProxy, networkLockArgs } from "../../src/screenshot/chromium.ts";
import {
  type AllowEntry,
  admit,
  checkUrl,
  createScreenshotService,
  findChromium,
  isLoopbackHost,
  type Listening,
  parseAllowEntry,
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
/** The session's agent listens on 127.0.0.1:3000; another program on 127.0.0.1:4000. */
const table: Listening[] = [
  { address: "127.0.0.1", port: 3000, owned: true },
  { address: "127.0.0.1", port: 4000, owned: false },
];
const servers = async () => table;
const noChromium = () =>
  createScreenshotService({ chromiumPath: null, allowHosts: [], logger, which: nothingOnPath, servers });
const entries = (...raw: string[]) => raw.map((r) => parseAllowEntry(r)!);

async function thrown(run: () => Promise<unknown>): Promise<AgError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    return error as AgError;
  }
  throw new Error("expected an AgError");
}

function denied(run: () => unknown): AgError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    expect((error as AgError).code).toBe("SCREENSHOT_TARGET_DENIED");
    expect((error as AgError).statusCode).toBe(403);
    return error as AgError;
  }
  throw new Error("expected SCREENSHOT_TARGET_DENIED");
}

describe("URL rules", () => {
  test("http and https URLs parse, in any of their spellings", () => {
    expect(checkUrl("http://127.1/").hostname).toBe("127.0.0.1");
    expect(checkUrl("http://0x7f.0.0.1:3000/").host).toBe("127.0.0.1:3000");
    expect(checkUrl("https://LOCALHOST./").hostname).toBe("localhost.");
  });

  test("only http and https", () => {
    expect(() => checkUrl("file:///etc/passwd")).toThrow("url must be http or https, not file");
    expect(() => checkUrl("javascript:alert(1)")).toThrow("not javascript");
    expect(() => checkUrl("ws://localhost/")).toThrow("not ws");
    expect(() => checkUrl("localhost:3000")).toThrow("url must be http or https");
    expect(() => checkUrl("not a url")).toThrow('url is not a valid URL: "not a url"');
  });

  test("isLoopbackHost covers localhost, 127.0.0.0/8 and ::1 only", () => {
    expect(["localhost", "127.0.0.1", "127.9.8.7", "::1", "[::1]"].every(isLoopbackHost)).toBe(true);
    expect(["128.0.0.1", "localhost.test", "::", "0.0.0.0", "::2"].some(isLoopbackHost)).toBe(false);
  });
});

describe("what a session may capture", () => {
  const own = (url: string, listeners: Listening[] = table, allow: AllowEntry[] = []) =>
    admit(new URL(url), allow, listeners, "s1");

  test("a port the session's processes listen on, in any loopback spelling that reaches it", () => {
    for (const url of ["http://127.0.0.1:3000/app?x=1", "http://127.1:3000/", "http://0x7f.0.0.1:3000/"])
      expect(own(url).bypass).toContain("127.0.0.1:3000");
  });

  test("another program's port, a port nobody listens on, other hosts: refused in the same words", () => {
    const messages = [
      "http://127.0.0.1:4000/",
      "http://127.0.0.1:4001/",
      "http://127.0.0.1/",
      "http://10.0.0.1:3000/",
      "http://169.254.169.254/latest/meta-data",
      "http://localhost.evil.test:3000/",
      "http://0.0.0.0:3000/",
    ].map((url) => denied(() => own(url)).message);
    expect(messages[0]).toBe(
      "http://127.0.0.1:4000 is not a server of session s1 (a port its agent's processes listen on, on loopback) and not in SVC_SCREENSHOT_ALLOW_HOSTS",
    );
    // Whether something listens (4000) or not (4001) reads the same.
    expect(messages[1]).toBe(messages[0]!.replace("4000", "4001"));
  });

  test("a port the session shares with another program is not the session's", () => {
    const shared: Listening[] = [
      { address: "127.0.0.1", port: 5000, owned: true },
      { address: "0.0.0.0", port: 5000, owned: false },
    ];
    denied(() => own("http://127.0.0.1:5000/", shared));
    // localhost leads to ::1 as well: someone else's socket there makes it not the session's.
    const split: Listening[] = [
      { address: "127.0.0.1", port: 5001, owned: true },
      { address: "::1", port: 5001, owned: false },
    ];
    expect(own("http://127.0.0.1:5001/", split).bypass).toEqual(["127.0.0.1:5001"]);
    denied(() => own("http://localhost:5001/", split));
  });

  test("wildcard listeners of the session answer on loopback; the bypass list names each way in", () => {
    const wild: Listening[] = [
      { address: "::", port: 5173, owned: true },
      { address: "0.0.0.0", port: 8080, owned: true },
    ];
    expect(own("http://localhost:5173/", wild).bypass.sort()).toEqual(
      ["127.0.0.1:5173", "[::1]:5173", "localhost:5173", "127.0.0.1:8080", "localhost:8080"].sort(),
    );
    expect(own("http://[::1]:5173/", wild).bypass).toContain("[::1]:5173");
  });

  test("allow entries: a host of any port, or one port; compared as URLs spell hosts", () => {
    const allow = entries("Preview.Example.test", "[fd00::7]:8080", "127.1:4000", "0:0::1");
    expect(own("https://preview.example.test/x", [], allow).bypass).toContain("preview.example.test");
    expect(own("http://[fd00::7]:8080/", [], allow).bypass).toContain("[fd00::7]:8080");
    expect(own("http://127.0.0.1:4000/", table, allow).bypass).toContain("127.0.0.1:4000");
    expect(own("http://[::1]:9999/", [], allow).bypass).toContain("[::1]");
    denied(() => own("http://[fd00::7]:8081/", [], allow));
    denied(() => own("http://127.0.0.1:4001/", table, allow));
    denied(() => own("http://other.example.test/", [], allow));
  });

  test("allow entries parse host, host:port, [v6], [v6]:port and bare IPv6; nothing else", () => {
    expect(parseAllowEntry("localhost:3000")).toEqual({ host: "localhost", port: 3000 });
    expect(parseAllowEntry("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(parseAllowEntry("fd00::1")).toEqual({ host: "fd00::1", port: null });
    expect(parseAllowEntry("10.1.2.3")).toEqual({ host: "10.1.2.3", port: null });
    for (const bad of ["a.test:0", "a.test:65536", "http://a.test", "a.test/x", "a b", ""])
      expect([bad, parseAllowEntry(bad)]).toEqual([bad, null]);
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
    const error = await thrown(() =>
      service.capture("s1", { url: "http://localhost:3000/", ...(extra as object) }),
    );
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe(message);
  });

  test("the bounds themselves are valid: the request gets as far as looking for Chromium", async () => {
    for (const size of [{ width: 100, height: 4096 }, { width: 4096, height: 100 }, {}]) {
      const error = await thrown(() =>
        service.capture("s1", { url: "http://127.0.0.1:3000/", fullPage: true, ...size }),
      );
      expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
    }
  });

  test("the target is decided before Chromium is looked for or started", async () => {
    const launched: string[] = [];
    const found = createScreenshotService({
      chromiumPath: null,
      allowHosts: [],
      logger,
      which: () => "/usr/bin/chromium",
      servers,
      launch: async (path) => {
        launched.push(path);
        throw new Error("not in this test");
      },
    });
    for (const url of ["http://example.com/", "http://127.0.0.1:4000/", "http://localhost/"]) {
      const error = await thrown(() => found.capture("s1", { url }));
      expect(error.code).toBe("SCREENSHOT_TARGET_DENIED");
    }
    expect(launched).toEqual([]);
    const error = await thrown(() => found.capture("s1", { url: "http://127.0.0.1:3000/" }));
    expect(error.code).toBe("SCREENSHOT_UNAVAILABLE");
    expect(launched).toEqual(["/usr/bin/chromium"]);
  });
});

describe("without Chromium", () => {
  test("capture → 501 SCREENSHOT_UNAVAILABLE naming what was looked for; available() is false", async () => {
    const service = noChromium();
    expect(await service.available()).toBe(false);
    const error = await thrown(() => service.capture("s1", { url: "http://localhost:3000/" }));
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
      servers,
    });
    expect(await service.available()).toBe(false);
    const error = await thrown(() => service.capture("s1", { url: "http://localhost:3000/" }));
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
    const service = createScreenshotService({
      chromiumPath: "chrome-beta",
      allowHosts: [],
      logger,
      which,
      servers,
    });
    expect(await service.available()).toBe(true);
  });
});

test("the browser reaches nothing directly; each capture's context only what it was admitted to", () => {
  const args = networkLockArgs();
  expect(args).toContain("--proxy-server=http://127.0.0.1:1");
  expect(args).toContain("--proxy-bypass-list=<-loopback>");
  expect(contextProxy(["127.0.0.1:3000", "preview.test"])).toEqual({
    server: "http://127.0.0.1:1",
    bypass: "<-loopback>,127.0.0.1:3000,preview.test",
  });
});

describe("settings", () => {
  const load = (env: Record<string, string>) =>
    loadConfig({ env, home: tempDir(), cwd: tempDir(), containerRoot: tempDir() });

  test("default: Chromium from PATH, the sessions' own servers only", () => {
    const { config } = load({});
    expect(config.chromiumPath).toBeNull();
    expect(config.screenshotAllowHosts).toEqual([]);
  });

  test("SVC_CHROMIUM_PATH and a comma-separated SVC_SCREENSHOT_ALLOW_HOSTS", () => {
    const { config, sources } = load({
      SVC_CHROMIUM_PATH: "/opt/chromium/chrome",
      SVC_SCREENSHOT_ALLOW_HOSTS: " preview.test, ,10.0.0.5,[fd00::1],127.0.0.1:8080,[::1]:3000,fd00::2 ",
    });
    expect(config.chromiumPath).toBe("/opt/chromium/chrome");
    expect(config.screenshotAllowHosts).toEqual([
      "preview.test",
      "10.0.0.5",
      "[fd00::1]",
      "127.0.0.1:8080",
      "[::1]:3000",
      "fd00::2",
    ]);
    expect(sources.screenshotAllowHosts).toBe("environment (SVC_SCREENSHOT_ALLOW_HOSTS)");
  });

  test("a host with a path, a scheme, a separator or a bad port in it stops start-up", () => {
    for (const bad of [
      "http://preview.test",
      "a.test/x",
      "a.test;b.test",
      "a.test:0",
      "a.test:70000",
      "a:b",
    ]) {
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
    const response = await shoot({ url: "http://localhost:3000/" }, "nope");
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

  test("a URL that is not the session's → 403 SCREENSHOT_TARGET_DENIED in the envelope", async () => {
    for (const url of ["http://internal.example:8080/", "http://127.0.0.1:4000/"]) {
      const response = await shoot({ url });
      expect(response.status).toBe(403);
      const body = await response.json();
      expect(body).toMatchObject({ code: "SCREENSHOT_TARGET_DENIED", statusCode: 403 });
      expect(body.error).toContain(`is not a server of session ${session.id}`);
    }
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
