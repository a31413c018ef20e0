import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { call, MASTER, newKey } from "../helpers/access.ts";
import { freePort } from "../helpers/binary.ts";
import { chromiumPath } from "../helpers/browser.ts";
import { decodePng } from "../helpers/png.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * What a screenshot may render, through ag's real runtime (SQLite file, HTTP, /proc) and real
 * Chromium: a headless session of tenant acme on the fake ACP agent starts dev servers
 * (tests/fakes/dev-server.ts: a red box on blue), one its child, one re-parented to init; this
 * process serves an unrelated loopback service and an allow-listed one.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const home = tempDir("ag-shot-home-");
const root = tempDir("ag-shot-acme-");
const fakeState = tempDir("ag-shot-fake-");

const page = (color: string) =>
  new Response(`<!doctype html><html><body style="margin:0;background:${color}"></body></html>`, {
    headers: { "content-type": "text/html" },
  });
const unrelatedHits: string[] = [];
const unrelated = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    unrelatedHits.push(new URL(request.url).pathname);
    return page("#00ff00");
  },
});
const allowed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => page("#00ffff") });

let ag: Awaited<ReturnType<typeof startTestRuntime>>;
let writer: string;
let reader: string;
let sessionId: string;
/** The dev servers the agent started: the child's port, the orphan's, and their pids (to end). */
const dev = { child: 0, orphan: 0, pids: [] as number[] };

async function waitIdle(id: string): Promise<void> {
  await until(
    async () => (await call(ag.app, "GET", `/v1/sessions/${id}`, { token: writer })).body.status === "idle",
    20_000,
  );
}

/** Asks the agent to start a dev server; answers its port. */
async function serve(prompt: string): Promise<number> {
  const sent = await call(ag.app, "POST", `/v1/sessions/${sessionId}/send`, {
    token: writer,
    body: { text: prompt },
  });
  expect(sent.body.delivered).toBe(true);
  await waitIdle(sessionId);
  const output: string = (await call(ag.app, "GET", `/v1/sessions/${sessionId}/read`, { token: writer })).body
    .output;
  const [pid, port] = /serving (\d+) (\d+)/.exec(output)!.slice(1).map(Number);
  dev.pids.push(pid!);
  return port!;
}

const shoot = (token: string, url: string) =>
  call(ag.app, "POST", `/v1/sessions/${sessionId}/screenshot`, {
    token,
    body: { url, width: 640, height: 360 },
  });

beforeAll(async () => {
  ag = await startTestRuntime(
    {
      SVC_AUTH_TOKEN: MASTER,
      SVC_CHROMIUM_PATH: chromiumPath(),
      SVC_SCREENSHOT_ALLOW_HOSTS: `127.0.0.1:${allowed.port}`,
    },
    { home, configFile: { tenantWorkdirs: { acme: { root } } } },
  );
  writer = (
    await newKey(ag.app, {
      name: "acme-writer",
      scopes: ["sessions:write", "sessions:read"],
      tenantId: "acme",
    })
  ).key;
  reader = (await newKey(ag.app, { name: "acme-reader", scopes: ["sessions:read"], tenantId: "acme" })).key;
  const created = await call(ag.app, "POST", "/v1/sessions", {
    token: writer,
    body: {
      agent: "gemini",
      driver: "acp",
      workDir: root,
      agentCommand: [process.execPath, FAKE, "--state", fakeState].join(" "),
    },
  });
  expect(created.status).toBe(201);
  sessionId = created.body.id;
  await waitIdle(sessionId);
  dev.child = await serve("serve");
  dev.orphan = await serve("serve detached");
}, 60_000);

afterAll(async () => {
  for (const pid of dev.pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone with its agent
    }
  }
  await call(ag.app, "DELETE", `/v1/sessions/${sessionId}`, { token: MASTER }).catch(() => {});
  await ag.drain(100);
  ag.close();
  unrelated.stop(true);
  allowed.stop(true);
});

describe("refused before anything starts or connects", () => {
  test("an unrelated loopback service: 403 for the tenant's read-only key and for the master; it sees no request", async () => {
    for (const token of [reader, MASTER]) {
      const refused = await shoot(token, `http://127.0.0.1:${unrelated.port}/`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: "SCREENSHOT_TARGET_DENIED", statusCode: 403 });
      expect(refused.body.error).toBe(
        `http://127.0.0.1:${unrelated.port} is not a server of session ${sessionId} (a port its agent's processes listen on, on loopback) and not in SVC_SCREENSHOT_ALLOW_HOSTS`,
      );
    }
    // A port where nothing listens is refused in the same words: the answer is no probe.
    const nobody = freePort();
    const silent = await shoot(reader, `http://localhost:${nobody}/`);
    expect([silent.status, silent.body.error]).toEqual([
      403,
      `http://localhost:${nobody} is not a server of session ${sessionId} (a port its agent's processes listen on, on loopback) and not in SVC_SCREENSHOT_ALLOW_HOSTS`,
    ]);
    expect(unrelatedHits).toEqual([]);
    // Nothing was started for them: the first capture below starts the browser.
    expect(ag.logs.some((l) => l.includes("screenshot browser started"))).toBe(false);
  });
});

describe("rendered", () => {
  test("the session's own dev server, its child, for the tenant's read-only key", async () => {
    const shot = await shoot(reader, `http://127.0.0.1:${dev.child}/`);
    expect(shot.status).toBe(200);
    const image = decodePng(Buffer.from(shot.body.data, "base64"));
    expect([image.width, image.height]).toEqual([640, 360]);
    expect(image.pixel(10, 10)).toEqual([255, 0, 0]);
    expect(image.pixel(400, 300)).toEqual([0, 0, 255]);
  }, 30_000);

  test("a dev server the agent started in the background (re-parented to init), as localhost", async () => {
    const shot = await shoot(reader, `http://localhost:${dev.orphan}/`);
    expect(shot.status).toBe(200);
    expect(decodePng(Buffer.from(shot.body.data, "base64")).pixel(10, 10)).toEqual([255, 0, 0]);
  }, 30_000);

  test("an allow-listed loopback service, for the tenant's key and the master", async () => {
    for (const token of [reader, MASTER]) {
      const shot = await shoot(token, `http://127.0.0.1:${allowed.port}/`);
      expect(shot.status).toBe(200);
      expect(decodePng(Buffer.from(shot.body.data, "base64")).pixel(10, 10)).toEqual([0, 255, 255]);
    }
  }, 30_000);
});

describe("redirects do not escape", () => {
  test("the session's page redirecting to the unrelated service: 403, and the service sees no request", async () => {
    const to = encodeURIComponent(`http://127.0.0.1:${unrelated.port}/secret`);
    const shot = await shoot(reader, `http://127.0.0.1:${dev.child}/away?to=${to}`);
    expect(shot.status).toBe(403);
    expect(shot.body.code).toBe("SCREENSHOT_TARGET_DENIED");
    expect(unrelatedHits).toEqual([]);
  }, 30_000);

  test("a redirect to the allow-listed service is followed", async () => {
    const to = encodeURIComponent(`http://127.0.0.1:${allowed.port}/`);
    const shot = await shoot(reader, `http://127.0.0.1:${dev.child}/away?to=${to}`);
    expect(shot.status).toBe(200);
    expect(decodePng(Buffer.from(shot.body.data, "base64")).pixel(10, 10)).toEqual([0, 255, 255]);
  }, 30_000);
});
