import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, linkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DASHBOARD_CSP } from "../../src/server/static.ts";
import { VERSION } from "../../src/version.ts";
import { agEnv, compiledBinary, freePort, runAg, startAg } from "../helpers/binary.ts";
import { tempDir } from "../helpers/temp.ts";
import { openTerminal } from "../helpers/terminal.ts";

let ag: string;
let svc: string;
beforeAll(async () => {
  ag = await compiledBinary();
  svc = join(ag, "..", "svc");
}, 60_000);

describe("the command line", () => {
  test("--version and -v print the version", async () => {
    for (const flag of ["--version", "-v"]) {
      const result = await runAg(ag, [flag]);
      expect(result).toEqual({ stdout: `${VERSION}\n`, stderr: "", exitCode: 0 });
    }
    expect((await runAg(svc, ["--version"])).stdout).toBe(`${VERSION}\n`);
  });

  test("--help and -h describe the server and its commands", async () => {
    for (const flag of ["--help", "-h"]) {
      const result = await runAg(ag, [flag]);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain("--port");
      expect(result.stdout).toContain("--json-logs");
      expect(result.stdout).toContain("status");
      expect(result.stdout).not.toContain("\u001b["); // no colour into a pipe
    }
    const status = await runAg(ag, ["status", "--help"]);
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toContain("--json");
  });

  test("an unknown command or option: one line, exit 1, no stack", async () => {
    const command = await runAg(ag, ["frobnicate"]);
    expect(command.exitCode).toBe(1);
    expect(command.stderr).toBe('ag: unknown command "frobnicate" (see ag --help) [USAGE_ERROR]\n');
    const option = await runAg(ag, ["--prot", "9100"]);
    expect(option.exitCode).toBe(1);
    expect(option.stderr).toBe("ag: unknown option --prot (did you mean --port?) [USAGE_ERROR]\n");
  });

  test("a bad configuration stops start-up with one line naming the key and its source", async () => {
    const env = await runAg(ag, [], { env: agEnv({ SVC_PORT: "abc" }) });
    expect(env.exitCode).toBe(1);
    expect(env.stderr).toBe(
      'ag: invalid port from environment (SVC_PORT): expected an integer (got "abc") [CONFIG_INVALID]\n',
    );

    const cwd = tempDir();
    writeFileSync(join(cwd, "svc.config.json"), '{"permissionMode": "yolo"}');
    const file = await runAg(ag, [], { cwd });
    expect(file.exitCode).toBe(1);
    expect(file.stderr.trim().split("\n")).toHaveLength(1);
    expect(file.stderr).toContain("permissionMode from ./svc.config.json");

    const flag = await runAg(ag, ["--port", "99999"]);
    expect(flag.stderr).toBe('ag: --port expects a number from 0 to 65535, got "99999" [USAGE_ERROR]\n');
  });

  test("--debug adds the stack trace", async () => {
    const result = await runAg(ag, ["--debug"], { env: agEnv({ SVC_PORT: "abc" }) });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.split("\n").length).toBeGreaterThan(3);
    expect(result.stderr).toContain("at ");
  });

  test("ag status without a server: exit 1 and how to start one", async () => {
    const result = await runAg(ag, ["status", "--port", String(freePort())]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("no ag server answers");
    expect(result.stderr).toContain("[SERVER_UNREACHABLE]");
  });
});

describe("the server, run from another directory with src/ and public/ gone", () => {
  test("--port N and --port=N both work", async () => {
    for (const form of [(p: number) => ["--port", String(p)], (p: number) => [`--port=${p}`]]) {
      const port = freePort();
      const server = await startAg(ag, [...form(port), "--host", "127.0.0.1"]);
      try {
        expect(server.port).toBe(port);
        expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  });

  test("serves health, the dashboard with its CSP, and the OpenAPI document", async () => {
    const server = await startAg(ag);
    try {
      const health = await (await fetch(`${server.url}/v1/health`)).json();
      expect(health).toMatchObject({ status: "ok", version: VERSION, sessions: { active: 0, total: 0 } });
      expect(health.tmux).toEqual({ healthy: true, error: null });

      const page = await fetch(`${server.url}/dashboard/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      expect(page.headers.get("referrer-policy")).toBe("no-referrer");
      const name = (await page.text()).match(/<script type="module" src="(app-[0-9a-z]{8}\.js)">/)?.[1];
      expect(name).toBeDefined();

      // Embedded with its precompressed copies: sent as brotli, kept for good; the page by ETag.
      const script = await fetch(`${server.url}/dashboard/${name}`, {
        headers: { "accept-encoding": "br" },
        decompress: false,
      });
      expect(script.headers.get("content-type")).toContain("javascript");
      expect(script.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(script.headers.get("content-encoding")).toBe("br");
      expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const etag = page.headers.get("etag")!;
      const again = await fetch(`${server.url}/dashboard/`, { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);

      const bare = await fetch(`${server.url}/dashboard`, { redirect: "manual" });
      expect(bare.status).toBe(308);
      expect(bare.headers.get("location")).toBe("/dashboard/");

      const traversal = await fetch(`${server.url}/dashboard/..%2f..%2fetc%2fpasswd`);
      expect(traversal.status).toBe(404);
      expect((await traversal.json()).code).toBe("NOT_FOUND");

      // Path parameters and queries survive minification (handlers read them by static analysis).
      const missing = await fetch(`${server.url}/v1/sessions/abc`);
      expect(await missing.json()).toEqual({
        error: "no session abc",
        code: "SESSION_NOT_FOUND",
        statusCode: 404,
      });
      expect(await (await fetch(`${server.url}/v1/sessions?status=idle&workDir=x`)).json()).toEqual([]);
      expect((await fetch(`${server.url}/v1/sessions?status=bogus`)).status).toBe(400);

      const openapi = await (await fetch(`${server.url}/v1/openapi.json`)).json();
      expect(openapi.paths["/v1/health"]).toBeDefined();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("SVC_DASHBOARD_ENABLED=false turns the dashboard off", async () => {
    const server = await startAg(ag, undefined, {
      env: agEnv({ SVC_DASHBOARD_ENABLED: "false", SVC_PORT: "0", SVC_HOST: "127.0.0.1" }),
    });
    try {
      const response = await fetch(`${server.url}/dashboard/`);
      expect(response.status).toBe(404);
      expect(server.stderr()).not.toContain("dashboard http");
    } finally {
      await server.stop();
    }
  });

  test("ag status and the svc alias report the running server", async () => {
    const env = agEnv({ SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    const server = await startAg(ag, [], { env });
    try {
      const status = await runAg(ag, ["status"], { env });
      expect(status.exitCode).toBe(0);
      expect(status.stdout).toContain(`ag ${VERSION} — ok`);
      expect(status.stdout).toMatch(new RegExp(`port\\s+${server.port}`));
      expect(status.stdout).toMatch(/sessions\s+0 active \/ 0 total/);
      expect(status.stdout).toMatch(/uptime\s+\d+s/);

      const json = await runAg(svc, ["status", "--json"], { env });
      expect(json.exitCode).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ status: "ok", port: server.port, url: server.url });

      const byFlag = await runAg(ag, ["--port", String(server.port), "status"]);
      expect(byFlag.exitCode).toBe(0);
    } finally {
      await server.stop();
    }
  });

  test("a second ag on the same state dir, or on the same port, fails with a clear message", async () => {
    const env = agEnv({ SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    const server = await startAg(ag, [], { env });
    try {
      const sameState = await runAg(ag, [], { env });
      expect(sameState.exitCode).toBe(1);
      expect(sameState.stderr).toContain(
        `another ag (pid ${server.proc.pid}, listening on port ${server.port})`,
      );
      expect(sameState.stderr).toContain("[STATE_DIR_LOCKED]");

      const samePort = await runAg(ag, ["--port", String(server.port), "--host", "127.0.0.1"]);
      expect(samePort.exitCode).toBe(1);
      expect(samePort.stderr).toContain(`port ${server.port} on 127.0.0.1 is already in use`);
      expect(samePort.stderr).toContain("[PORT_IN_USE]");
    } finally {
      await server.stop();
    }
  });

  test("auth on: health stays open, everything else wants the token", async () => {
    const server = await startAg(ag, undefined, {
      env: agEnv({ SVC_AUTH_TOKEN: "t0k", SVC_PORT: "0", SVC_HOST: "127.0.0.1" }),
    });
    try {
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
      expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(401);
      expect(
        (await fetch(`${server.url}/v1/sessions`, { headers: { authorization: "Bearer t0k" } })).status,
      ).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("the live terminal WebSocket: a single-use token, a snapshot, control, typed bytes echoed", async () => {
    const token = "binary-terminal-token";
    const root = tempDir();
    const script = join(root, "agent.sh");
    writeFileSync(
      script,
      `#!/bin/sh\nprintf 'binary ready\\n'\nwhile IFS= read -r l; do printf 'you said: %s\\n' "$l"; done\n`,
    );
    chmodSync(script, 0o755);
    const server = await startAg(ag, ["--port", "0", "--host", "127.0.0.1"], {
      env: agEnv({ SVC_AUTH_TOKEN: token }),
    });
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    try {
      const created = await fetch(`${server.url}/v1/sessions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ workDir: root, agentCommand: script }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const sse = (await (
        await fetch(`${server.url}/v1/auth/sse-token`, { method: "POST", headers })
      ).json()) as {
        token: string;
      };
      const client = await openTerminal(
        `${server.url.replace("http", "ws")}/v1/sessions/${id}/terminal?token=${sse.token}`,
      );
      await client.until((c) => c.texts()[0]?.type === "snapshot", 10_000);
      expect(client.texts()[0]).toMatchObject({ cols: 120, rows: 40 });
      client.send({ type: "control" });
      await client.until((c) => c.texts().some((m) => m.type === "control" && m.granted));
      client.send({ type: "input", data: "from the binary\r" });
      await client.until((c) => c.output().includes("you said: from the binary"), 10_000);
      client.close();
    } finally {
      await server.stop();
    }
  });

  test("a .env or bunfig.toml in the working directory changes nothing", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, ".env"), "SVC_AUTH_TOKEN=from-dotenv\n");
    writeFileSync(join(cwd, "bunfig.toml"), 'preload = ["./nope.ts"]\n');
    const server = await startAg(ag, ["--port", "0", "--host", "127.0.0.1"], { cwd });
    try {
      expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("--json-logs: every log line is one JSON object", async () => {
    const server = await startAg(ag, ["--port", "0", "--host", "127.0.0.1", "--json-logs"]);
    await server.stop();
    const lines = server.stderr().trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty("level");
    expect(lines.map((l) => JSON.parse(l).msg)).toContain("stopped; agent sessions keep running");
  });

  test("a non-loopback bind without a token: ag generates its token, requires it, and the banner names its file (never the token); the CLI finds it", async () => {
    const env = agEnv();
    const server = await startAg(ag, ["--port", "0", "--host", "0.0.0.0"], { env });
    try {
      const file = join(server.stateDir, "auth-token");
      const token = server.token();
      expect(token).toMatch(/^agt_/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // The banner and the listening line agree: all interfaces, the URL to use here, the file.
      const [banner, listening] = server
        .stderr()
        .trim()
        .split("\n")
        .filter((line) => line.includes("listens on") || line.includes("listening on"));
      expect(banner).toContain(
        `ag listens on all interfaces (0.0.0.0, port ${server.port}): ${server.url} from this machine`,
      );
      expect(banner).toContain(`every request needs the token ag generated in ${file}`);
      expect(listening).toContain(`listening on ${server.url}`);
      expect(server.stderr()).not.toContain(token);
      expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(401);
      const evil = await fetch(`http://127.0.0.1:${server.port}/v1/sessions`, {
        headers: { host: "evil.example.com" },
      });
      expect(evil.status).toBe(401);
      const authorized = { headers: { authorization: `Bearer ${token}` } };
      expect((await fetch(`${server.url}/v1/sessions`, authorized)).status).toBe(200);
      // The CLI on this machine, with the same state directory, needs nothing more.
      const list = await runAg(ag, ["list", "--json"], { env });
      expect([list.exitCode, list.stderr]).toEqual([0, ""]);
    } finally {
      await server.stop();
    }
  });

  test("SVC_ALLOW_UNAUTHENTICATED_NETWORK: served without the token, warned about loudly", async () => {
    const server = await startAg(ag, ["--port", "0", "--host", "0.0.0.0"], {
      env: agEnv({ SVC_ALLOW_UNAUTHENTICATED_NETWORK: "1" }),
    });
    try {
      const warning = server
        .stderr()
        .split("\n")
        .find((line) => line.includes("WITHOUT authentication"));
      expect(warning).toContain(
        `!!! ag listens on all interfaces (0.0.0.0, port ${server.port}) WITHOUT authentication (SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork is on)`,
      );
      expect(warning).toContain(`use ${server.url}.`);
      expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(200);
      const evil = await fetch(`http://127.0.0.1:${server.port}/v1/sessions`, {
        headers: { host: "evil.example.com" },
      });
      expect(evil.status).toBe(403);
    } finally {
      await server.stop();
    }
  });
});

describe("shutdown", () => {
  test("SIGTERM drains a request in flight within the grace period and exits 0", async () => {
    // A tmux whose `list-sessions` (the health probe) takes a second keeps GET /v1/health in flight.
    const bin = tempDir();
    writeFileSync(
      join(bin, "tmux"),
      `#!/bin/sh\ncase "$*" in *list-sessions*) sleep 1;; esac\nexec ${Bun.which("tmux")} "$@"\n`,
    );
    chmodSync(join(bin, "tmux"), 0o755);
    const env = agEnv({ SVC_SHUTDOWN_GRACE_MS: "5000", SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    env.PATH = `${bin}:${env.PATH}`;
    const server = await startAg(ag, [], { env });
    const inFlight = fetch(`${server.url}/v1/health`);
    await Bun.sleep(200);
    const started = performance.now();
    server.proc.kill("SIGTERM");
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect((await response.json()).status).toBe("ok");
    expect(await server.proc.exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(server.stderr()).toContain("SIGTERM received: draining requests");
    await expect(fetch(`${server.url}/v1/health`)).rejects.toThrow();
  });

  test("SIGINT stops an idle server at once", async () => {
    const server = await startAg(ag);
    const started = performance.now();
    expect(await server.stop("SIGINT")).toBe(0);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test("the binary works under another name (the legacy alias is the same program)", async () => {
    const renamed = join(tempDir(), "svc");
    linkSync(ag, renamed);
    expect((await runAg(renamed, ["--version"])).stdout).toBe(`${VERSION}\n`);
  });
});
