import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import type { HttpApp } from "../../src/server/app.ts";
import { type HttpServer, listen } from "../../src/server/listen.ts";
import { createLogger } from "../../src/shared/log.ts";
import { testApp } from "../helpers/app.ts";
import { type AgProcess, agEnv, compiledBinary, startAg } from "../helpers/binary.ts";

/**
 * Issue 28: a 60 KB body of nested arrays, sent without any secret, froze the server for 20 s and
 * took 2.4 GB; a malformed Host got Bun's developer page. Here over real HTTP, against the app in
 * this process and against the compiled binary run with NODE_ENV=development.
 *
 * The bounds of the Done-when (an answer in 100 ms, health in 50 ms, RSS + 20 MB) are
 * asserted with room for a loaded machine; bench/hostile-input.ts measures them (docs/benchmarks.md).
 */
const MASTER = "master-token-for-hostile-input";
const SIZES = [60_000, 200_000];
const ANSWER_MS = 1_000;
const HEALTH_MS = 500;
const RSS_GROWTH_BYTES = 20 * 1024 * 1024;
const MALFORMED_HOSTS = ["[zz]", "127.999.999.999", "", "a b", "[::1"];

const nested = (bytes: number) => "[".repeat(bytes / 2) + "]".repeat(bytes / 2);

/**
 * As a page of ag's own origin sends it: without a token configured, that is the stranger whose
 * body ag reads (a request without an Origin is refused before its body, see auth.test.ts).
 */
async function post(base: string, path: string, body: string) {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", origin: base },
  });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

/** The slowest of `/v1/health` answers asked one after another while `load` runs. */
async function slowestHealthDuring(base: string, load: Promise<unknown>): Promise<number> {
  let done = false;
  void load.finally(() => (done = true));
  let slowest = 0;
  do {
    const started = performance.now();
    const response = await fetch(`${base}/v1/health`);
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    slowest = Math.max(slowest, performance.now() - started);
  } while (!done);
  await load;
  return slowest;
}

/** One request as raw bytes (fetch would normalise the Host), answered whole. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (data) => (answer += data));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, 5_000);
  });
}

function expectJsonRefusal(answer: string, status: number) {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  expect(head).toStartWith(`HTTP/1.1 ${status}`);
  expect(head.toLowerCase()).toContain("content-type: application/json");
  expect(body).not.toContain("<");
  expect(body).not.toContain(process.cwd());
  const envelope = JSON.parse(body);
  expect(Object.keys(envelope).sort()).toEqual(["code", "error", "statusCode"]);
  expect(envelope.statusCode).toBe(status);
}

/** The hostile bodies of the issue, to each route, checked against `rss()` of the server's process. */
type Routes = Record<string, "VALIDATION_ERROR" | "UNAUTHORIZED">;
const HOOK: Routes = { "/v1/hooks/claude/Stop": "VALIDATION_ERROR" };

function hostileBodies(target: () => { base: string; routes: Routes; rss: () => number | Promise<number> }) {
  for (const size of SIZES) {
    test(`${size / 1000} KB of nested arrays, unauthenticated: a fast 400 while health keeps answering`, async () => {
      const { base, routes, rss } = target();
      // Warm: the first request of a route compiles its handler.
      for (const route of Object.keys(routes)) await post(base, route, nested(size));
      const before = await rss();
      for (const [route, code] of Object.entries(routes)) {
        const answers: Array<Awaited<ReturnType<typeof post>>> = [];
        const load = (async () => {
          // Few enough that the refused tokens stay within an address's budget of failures (20 a
          // minute; past it refusals are slowed on purpose).
          for (let i = 0; i < 4; i++) answers.push(await post(base, route, nested(size)));
        })();
        const slowestHealth = await slowestHealthDuring(base, load);
        for (const answer of answers) {
          expect([answer.status, JSON.parse(answer.text).code]).toEqual([
            code === "UNAUTHORIZED" ? 401 : 400,
            code,
          ]);
          expect(answer.ms).toBeLessThan(ANSWER_MS);
        }
        expect(slowestHealth).toBeLessThan(HEALTH_MS);
      }
      expect((await rss()) - before).toBeLessThan(RSS_GROWTH_BYTES);
    });
  }

  test("a malformed Host is a JSON 400 before routing and authentication", async () => {
    const port = Number(new URL(target().base).port);
    for (const host of MALFORMED_HOSTS) {
      for (const path of ["/v1/health", "/v1/sessions"]) {
        const answer = await raw(port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        expectJsonRefusal(answer, 400);
      }
    }
    expectJsonRefusal(await raw(port, "GET /v1/health HTTP/1.0\r\n\r\n"), 400);
  });
}

describe("the app over real HTTP", () => {
  let guarded: HttpServer;
  let open: HttpServer;
  let app: ReturnType<typeof testApp>;
  beforeAll(async () => {
    app = testApp({ authToken: MASTER });
    guarded = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: 2 * 1024 * 1024 });
    // Without a token (loopback only) POST /v1/sessions from ag's own origin reads its body too.
    open = await listen(testApp(), { host: "127.0.0.1", port: 0, maxBodyBytes: 2 * 1024 * 1024 });
  });
  afterAll(async () => {
    await guarded?.stop(0);
    await open?.stop(0);
  });
  const rss = () => {
    Bun.gc(true);
    return process.memoryUsage().rss;
  };

  describe("with a token", () => {
    hostileBodies(() => ({
      base: `http://127.0.0.1:${guarded.port}`,
      // The token is asked for before the body is read.
      routes: { ...HOOK, "/v1/sessions": "UNAUTHORIZED" },
      rss,
    }));
  });
  describe("without a token", () => {
    hostileBodies(() => ({
      base: `http://127.0.0.1:${open.port}`,
      routes: { ...HOOK, "/v1/sessions": "VALIDATION_ERROR" },
      rss,
    }));
  });

  test("a stranger's refusals leave one log line a minute, not one each", async () => {
    const refusals = app.logs.filter((line) => line.includes("refused POST /v1/hooks/claude/Stop"));
    expect(refusals).toHaveLength(1);
    expect(app.logs.filter((line) => line.includes("the Host header")).length).toBeLessThanOrEqual(3);
  });
});

test("whatever escapes the app is the JSON envelope, never Bun's page, and logged once a minute", async () => {
  const logs: string[] = [];
  const logger = createLogger({
    level: "debug",
    json: false,
    stream: { write: (line: string) => logs.push(line) } as never,
  });
  const broken: HttpApp = {
    handle: () => Promise.reject(new Error("escaped at /secret/path.ts:12")),
    routes: () => [],
  };
  const server = await listen(broken, { host: "127.0.0.1", port: 0, maxBodyBytes: 1024, logger });
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await raw(
        server.port,
        "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      );
      expectJsonRefusal(answer, 500);
      expect(answer).not.toContain("/secret/path");
    }
    expect(logs.filter((line) => line.includes("request failed outside the app"))).toHaveLength(1);
  } finally {
    await server.stop(0);
  }
});

describe("the compiled binary, run with NODE_ENV=development", () => {
  let ag: AgProcess;
  let binary: string;
  beforeAll(async () => {
    binary = await compiledBinary();
    ag = await startAg(binary, undefined, {
      env: agEnv({ NODE_ENV: "development", SVC_AUTH_TOKEN: MASTER, SVC_RATE_LIMIT_PER_MIN: "0" }),
    });
  }, 120_000);
  afterAll(async () => {
    await ag?.stop();
  });
  const vmRss = () => {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${ag.proc.pid}/status`, "utf8"))?.[1];
    return Number(kb) * 1024;
  };

  hostileBodies(() => ({ base: ag.url, routes: { ...HOOK, "/v1/sessions": "UNAUTHORIZED" }, rss: vmRss }));

  test("holds no run-time decision of Elysia's mode: it is production, fixed at build time", () => {
    // Elysia's own line is `isProduction = (env?.NODE_ENV ?? env?.ENV) === "production"`.
    expect(readFileSync(binary).includes("NODE_ENV??")).toBe(false);
  });

  test("its log holds one line per kind of refusal, and no stack", () => {
    const log = ag.stderr();
    expect(log.match(/refused POST \/v1\/hooks\/claude\/Stop/g)).toHaveLength(1);
    expect(log).not.toMatch(/^\s+at /m);
    expect(log).not.toContain("unhandled error");
  });
});
