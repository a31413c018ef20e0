import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { hostName, isLoopbackName } from "../../src/server/auth.ts";
import { sampleSession, testApp } from "../helpers/app.ts";
import { postHook } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

describe("with SVC_AUTH_TOKEN set", () => {
  const app = testApp({ authToken: "tok-123", dashboardRoot: tempDir() });

  test("GET /v1/health stays open, and says a credential is needed (a page asks before it sends one)", async () => {
    const response = await app.request("GET", "/v1/health");
    expect(response.status).toBe(200);
    expect((await response.json()).auth).toBe("token");
    expect(
      (
        await testApp()
          .request("GET", "/v1/health", { token: false })
          .then((r) => r.json())
      ).auth,
    ).toBe("local");
  });

  test("no token → 401 envelope with a Bearer challenge", async () => {
    const response = await app.request("GET", "/v1/sessions");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    expect(await response.json()).toEqual({
      error: "missing bearer token",
      code: "UNAUTHORIZED",
      statusCode: 401,
    });
  });

  test("a wrong token → 401", async () => {
    const response = await app.request("GET", "/v1/sessions", {
      headers: { authorization: "Bearer tok-124" },
    });
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe("invalid bearer token");
  });

  test("a token of another length, or another scheme → 401", async () => {
    for (const header of ["Bearer t", "Basic dG9rLTEyMw==", "tok-123", "Bearer tok-123 extra"]) {
      expect((await app.request("GET", "/v1/sessions", { headers: { authorization: header } })).status).toBe(
        401,
      );
    }
  });

  test("the right token → 200", async () => {
    const response = await app.request("GET", "/v1/sessions", {
      headers: { authorization: "Bearer tok-123" },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  test("an unknown route answers 401, not 404: nothing is revealed to strangers", async () => {
    expect((await app.request("GET", "/v1/secret-route")).status).toBe(401);
    expect((await app.request("POST", "/sessions")).status).toBe(401);
  });

  test("health over another method is not open", async () => {
    expect((await app.request("POST", "/v1/health")).status).toBe(401);
  });

  test("any Host is accepted: the token is the guard", async () => {
    const response = await app.request("GET", "/v1/sessions", {
      headers: { authorization: "Bearer tok-123", host: "ag.example.com" },
    });
    expect(response.status).toBe(200);
  });
});

describe("without a token: loopback only (DNS-rebinding guard)", () => {
  const app = testApp({ allowedHosts: ["0.0.0.0", "devbox.lan"] });
  const get = (headers: Record<string, string>) => app.request("GET", "/v1/sessions", { headers });

  test.each([
    "localhost:9100",
    "127.0.0.1:9100",
    "127.8.9.10",
    "[::1]:9100",
    "LOCALHOST",
    "app.localhost:9100",
  ])("Host %s is served", async (host) => {
    expect((await get({ host })).status).toBe(200);
  });

  test("a configured host name is served", async () => {
    expect((await get({ host: "devbox.lan:9100" })).status).toBe(200);
  });

  test.each(["evil.example.com", "attacker.test:9100", "0.0.0.0:9100", "192.168.1.5:9100"])(
    "Host %s is refused with 403",
    async (host) => {
      const response = await get({ host });
      expect(response.status).toBe(403);
      expect((await response.json()).code).toBe("FORBIDDEN");
    },
  );

  test("a browser request from another origin is refused", async () => {
    const response = await app.request("POST", "/v1/sessions", {
      body: "{}",
      headers: { host: "127.0.0.1:9100", origin: "http://evil.example.com" },
    });
    expect(response.status).toBe(403);
    expect((await response.json()).error).toContain("cross-origin");
    expect((await get({ host: "127.0.0.1:9100", origin: "http://localhost:3000" })).status).toBe(403);
    expect((await get({ host: "127.0.0.1:9100", origin: "null" })).status).toBe(403);
  });

  test("the dashboard's own origin is served", async () => {
    expect((await get({ host: "127.0.0.1:9100", origin: "http://127.0.0.1:9100" })).status).toBe(200);
  });

  test("health is guarded too", async () => {
    expect((await app.request("GET", "/v1/health", { headers: { host: "evil.example.com" } })).status).toBe(
      403,
    );
  });
});

describe("without a token configured: ag's own token for state changes without an Origin", () => {
  const app = testApp();
  const template = (name: string) => ({ name, workDir: tempDir() });
  /** Who the audit log says made the latest template. */
  const lastCreator = () => app.audit.list({ limit: 50 }).find((r) => r.action === "template.create")?.actor;

  test("ag generated its token into the state directory, 0600, and the file is the one named", () => {
    const file = join(app.stateDir, "auth-token");
    expect(readFileSync(file, "utf8").trim()).toBe(app.token);
    expect(app.token).toMatch(/^agt_[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  test("a POST or DELETE without an Origin and without the token: 401 telling where the token is", async () => {
    for (const [method, path] of [
      ["POST", "/v1/templates"],
      ["DELETE", "/v1/memory/some/key"],
    ] as const) {
      const response = await app.request(method, path, { body: template("t"), token: false });
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(body).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 });
      expect(body.error).toContain("without an Origin header needs ag's token");
      expect(body.error).toContain(join(app.stateDir, "auth-token"));
      expect(body.error).not.toContain(app.token);
    }
    // Reading needs nothing: the loopback Host and Origin checks hold off the browsers.
    expect((await app.request("GET", "/v1/templates", { token: false })).status).toBe(200);
  });

  test("with the token (as the CLI sends it): accepted, and the caller is the owner (`local`)", async () => {
    const response = await app.request("POST", "/v1/templates", {
      body: template("by-cli"),
      headers: { authorization: `Bearer ${app.token}` },
    });
    expect(response.status).toBe(201);
    expect(lastCreator()).toBe("local");
  });

  test("a wrong token is refused, even where none is needed", async () => {
    const wrong = { authorization: "Bearer agt_not-the-token" };
    expect((await app.request("POST", "/v1/templates", { body: template("x"), headers: wrong })).status).toBe(
      401,
    );
    expect((await app.request("GET", "/v1/templates", { headers: wrong })).status).toBe(401);
  });

  test("a browser on ag's own origin needs no token (it always sends an Origin); another origin is refused", async () => {
    const same = await app.request("POST", "/v1/templates", {
      body: template("by-browser"),
      headers: { host: "localhost:9100", origin: "http://localhost:9100" },
      token: false,
    });
    expect(same.status).toBe(201);
    expect(lastCreator()).toBe("local");
    const foreign = await app.request("POST", "/v1/templates", {
      body: template("x"),
      headers: { host: "localhost:9100", origin: "http://evil.example.com" },
    });
    expect(foreign.status).toBe(403);
  });

  test("a WebSocket handshake changes state too (the terminal takes keystrokes): no Origin, no token → 401", async () => {
    const response = await app.request("GET", "/v1/sessions/x/terminal", {
      headers: { upgrade: "websocket", connection: "Upgrade" },
      token: false,
    });
    expect(response.status).toBe(401);
  });

  test("agent hooks need no token: their session's secret is their credential", async () => {
    const session = sampleSession({ status: "working" });
    app.repo.insert(session);
    // postHook sends no token and no Origin, as an agent's hook does.
    expect((await postHook(app, session.id, "Stop")).status).toBe(200);
    expect((await postHook(app, session.id, "Stop", {}, "a-wrong-secret")).status).toBe(401);
  });
});

describe("host parsing", () => {
  test("hostName strips ports and brackets", () => {
    expect(hostName("[::1]:9100")).toBe("::1");
    expect(hostName("Example.COM:80")).toBe("example.com");
    expect(hostName("127.0.0.1")).toBe("127.0.0.1");
  });

  test("loopback names", () => {
    for (const h of ["localhost", "127.0.0.1", "127.255.0.1", "::1", "x.localhost"])
      expect(isLoopbackName(h)).toBe(true);
    for (const h of ["localhost.evil.com", "128.0.0.1", "0.0.0.0", "127.0.0.1.nip.io"])
      expect(isLoopbackName(h)).toBe(false);
  });
});
