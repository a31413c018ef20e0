import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { machineAddresses } from "../../src/server/banner.ts";
import { ag, cliEnv } from "../helpers/cli.ts";
import { startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * Issue 28, item 9: ag is never open by accident. A real runtime in a detected container (a fake
 * root holding /.dockerenv: the loader's containerRoot) binds 0.0.0.0 by default; it is reached
 * here through this machine's own non-loopback address, as another machine would reach it.
 */

/** This machine's first IPv4 address that is not loopback: what another machine would dial. */
const ADDRESS = machineAddresses().find((a) => !a.includes(":"));

function container(): string {
  const root = tempDir("ag-container-");
  writeFileSync(join(root, ".dockerenv"), "");
  return root;
}

const running: TestRuntime[] = [];
async function start(env: Record<string, string>, home: string): Promise<TestRuntime> {
  const runtime = await startTestRuntime(env, { home, containerRoot: container() });
  running.push(runtime);
  return runtime;
}
async function stop(runtime: TestRuntime): Promise<void> {
  running.splice(running.indexOf(runtime), 1);
  await runtime.drain(100);
  runtime.close();
}
afterEach(async () => {
  for (const runtime of [...running]) await stop(runtime);
});

function call(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

// Without an address other than loopback there is no other machine's way in to test.
describe.skipIf(!ADDRESS)("in a detected container with no token configured", () => {
  test("bound to 0.0.0.0, a stranger from a non-loopback address is refused and the generated token works; the file is 0600 and reused across restarts", async () => {
    const home = tempDir("ag-home-");
    const first = await start({}, home);
    const remote = `http://${ADDRESS}:${first.server.port}`;
    const file = join(first.stateDir, "auth-token");
    const token = first.token();
    expect(token).toMatch(/^agt_[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(file, "utf8").trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Said where it is, never what it is.
    const logs = first.logs.join("\n");
    expect(logs).toContain(`ag generated its own in ${file}`);
    expect(logs).toContain(`every request needs the token ag generated in ${file}`);
    expect(logs).not.toContain(token);

    expect((await call(remote, "GET", "/v1/health")).status).toBe(200);
    for (const [method, path] of [
      ["GET", "/v1/sessions"],
      ["POST", "/v1/templates"],
    ] as const) {
      const refused = await call(remote, method, path, {}, method === "POST" ? { name: "x" } : undefined);
      expect(refused.status).toBe(401);
      expect((await refused.json()).code).toBe("UNAUTHORIZED");
    }
    // A browser's Origin buys nothing here: the token is the guard.
    const browser = await call(remote, "POST", "/v1/templates", { origin: remote }, { name: "x" });
    expect(browser.status).toBe(401);
    const bearer = { authorization: `Bearer ${token}` };
    expect((await call(remote, "GET", "/v1/sessions", bearer)).status).toBe(200);
    const created = await call(remote, "POST", "/v1/templates", bearer, { name: "kept", workDir: home });
    expect(created.status).toBe(201);

    await stop(first);
    const second = await start({}, home);
    expect(readFileSync(file, "utf8").trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(second.logs.join("\n")).not.toContain("ag generated its own");
    const again = `http://${ADDRESS}:${second.server.port}`;
    expect((await call(again, "GET", "/v1/templates")).status).toBe(401);
    const templates = await call(again, "GET", "/v1/templates", bearer);
    expect((await templates.json()).map((t: { name: string }) => t.name)).toEqual(["kept"]);
  });

  test("the CLI on the same machine finds the token with no setup: ag list, and a POST that gets past the guard", async () => {
    const runtime = await start({}, tempDir("ag-home-"));
    // Only the state directory is shared, as between `ag` and `ag list` on one machine; the CLI
    // finds the server in it (server.json) and the token beside it.
    const env = cliEnv({ stateDir: runtime.stateDir });
    const list = await ag(["list", "--json"], undefined, env);
    expect(list.stderr).toBe("");
    expect(JSON.parse(list.stdout)).toEqual([]);
    const retry = await ag(["channels", "dlq", "retry", "email"], undefined, env);
    // Refused by the route (nothing is configured), not by the guard.
    expect(retry.stderr).toContain("[CONFLICT]");
    // The same CLI on another state directory (another machine, another user) has no token.
    const port = String(runtime.server.port);
    const stranger = await ag(["list", "--port", port], undefined, cliEnv({ stateDir: tempDir() }));
    expect(stranger.exitCode).toBe(1);
    expect(stranger.stderr).toContain("[UNAUTHORIZED]");
  });

  test("SVC_ALLOW_UNAUTHENTICATED_NETWORK serves the network without the token, warns loudly at every start, and still wants it for state changes without an Origin", async () => {
    const home = tempDir("ag-home-");
    // The host name the other machines use must be configured (a DNS-rebinding page's is not).
    const env = { SVC_ALLOW_UNAUTHENTICATED_NETWORK: "1", SVC_DASHBOARD_URL: `http://${ADDRESS}/dashboard` };
    for (let start_ = 0; start_ < 2; start_++) {
      const runtime = await start(env, home);
      const warning = runtime.logs.find((l) => l.includes("WITHOUT authentication"));
      expect(JSON.parse(warning!)).toMatchObject({ level: "warn" });
      expect(warning).toContain("SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork is on");
      const remote = `http://${ADDRESS}:${runtime.server.port}`;
      expect((await call(remote, "GET", "/v1/sessions")).status).toBe(200);
      const bare = await call(remote, "POST", "/v1/templates", {}, { name: "x", workDir: home });
      expect(bare.status).toBe(401);
      expect((await bare.json()).error).toContain(join(runtime.stateDir, "auth-token"));
      const page = await call(
        remote,
        "POST",
        "/v1/templates",
        { origin: remote },
        { name: `page-${start_}`, workDir: home },
      );
      expect(page.status).toBe(201);
      const cli = { authorization: `Bearer ${runtime.token()}` };
      expect(
        (await call(remote, "POST", "/v1/templates", cli, { name: `cli-${start_}`, workDir: home })).status,
      ).toBe(201);
      await stop(runtime);
    }
  });
});

describe("on loopback with no token configured (ag as its owner's local tool)", () => {
  test("an Origin-less POST needs ag's token; a page of ag's own origin does not; the CLI has it", async () => {
    const runtime = await startTestRuntime({});
    running.push(runtime);
    const bare = await call(runtime.url, "POST", "/v1/templates", {}, { name: "x", workDir: tempDir() });
    expect(bare.status).toBe(401);
    const envelope = await bare.json();
    expect(envelope).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 });
    expect(envelope.error).toContain(join(runtime.stateDir, "auth-token"));
    const withToken = await call(
      runtime.url,
      "POST",
      "/v1/templates",
      { authorization: `Bearer ${runtime.token()}` },
      { name: "a", workDir: tempDir() },
    );
    expect(withToken.status).toBe(201);
    const page = await call(
      runtime.url,
      "POST",
      "/v1/templates",
      { origin: runtime.url },
      { name: "b", workDir: tempDir() },
    );
    expect(page.status).toBe(201);
    const retry = await ag(
      ["channels", "dlq", "retry", "email"],
      undefined,
      cliEnv({ stateDir: runtime.stateDir }),
    );
    expect(retry.stderr).toContain("[CONFLICT]");
  });
});
