import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { handshake, openRawTerminal, openTerminal, type TerminalClient } from "../helpers/terminal.ts";
import { privateSocket, tmux } from "../helpers/tmux.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The live terminal end to end: the real runtime on port 0, real tmux on a private socket, and
 * a small line-reading program as the session's agent (it ignores the agent flags ag adds).
 */
const MASTER = "terminal-master-token";

function agentScript(): string {
  const path = join(tempDir(), "agent.sh");
  writeFileSync(
    path,
    [
      "#!/bin/sh",
      "printf 'terminal ready\\n'",
      "while IFS= read -r line; do",
      // About 21 MB, as fast as the terminal takes it.
      `  [ "$line" = flood ] && yes 'flood line with some text in it to fill a slow client 0123456789' | head -n 300000`,
      `  printf 'you said: %s\\n' "$line"`,
      "done",
    ].join("\n"),
  );
  chmodSync(path, 0o755);
  return path;
}

interface World {
  runtime: TestRuntime;
  socket: string;
  token: string;
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: Json }>;
  ws(id: string, query?: string): string;
  /** A new session running the script, its screen drawn. */
  session(): Promise<string>;
  stop(): Promise<void>;
}

async function startWorld(token: string): Promise<World> {
  const socket = privateSocket();
  const runtime = await startTestRuntime({
    SVC_TMUX_SOCKET: socket,
    SVC_AUTH_TOKEN: token,
    SVC_RATE_LIMIT_PER_MIN: "0",
  });
  const script = agentScript();
  const workDir = tempDir();
  const world: World = {
    runtime,
    socket,
    token,
    // Without a configured token, the one ag generated (as the CLI sends it).
    async api(method, path, body, bearer = token || runtime.token()) {
      const response = await fetch(`${runtime.url}${path}`, {
        method,
        headers: {
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : {} };
    },
    ws: (id, query = "") => `${runtime.url.replace("http", "ws")}/v1/sessions/${id}/terminal${query}`,
    async session() {
      const created = await world.api("POST", "/v1/sessions", {
        workDir,
        agentCommand: script,
        name: `term-${crypto.randomUUID().slice(0, 8)}`,
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const deadline = Date.now() + 10_000;
      while (!(await world.api("GET", `/v1/sessions/${id}/pane`)).body.content?.includes("terminal ready")) {
        if (Date.now() > deadline) throw new Error("the session's program did not start");
        await Bun.sleep(20);
      }
      return id;
    },
    async stop() {
      await runtime.drain(200);
      runtime.close();
    },
  };
  return world;
}

const headers = (token: string) => ({ authorization: `Bearer ${token}` });
const snapshots = (client: TerminalClient) => client.texts().filter((m) => m.type === "snapshot");
const last = (client: TerminalClient) => client.texts().at(-1);

async function newKey(world: World, scopes: string[], tenantId?: string): Promise<string> {
  const created = await world.api("POST", "/v1/auth/keys", {
    name: `term-${scopes.join("-")}-${tenantId ?? "none"}`,
    scopes,
    ...(tenantId ? { tenantId } : {}),
  });
  expect(created.status).toBe(201);
  return created.body.key;
}

async function sseToken(world: World, bearer = world.token): Promise<string> {
  const minted = await world.api("POST", "/v1/auth/sse-token", undefined, bearer);
  expect(minted.status).toBe(201);
  return minted.body.token;
}

function windowOf(world: World, id: string): string {
  const panes = tmux(world.socket, "list-panes", "-a", "-F", "#{window_id} #{@svc_session_id}").stdout;
  const line = panes.split("\n").find((l) => l.endsWith(` ${id}`));
  if (!line) throw new Error(`no window for session ${id}`);
  return line.split(" ")[0]!;
}

describe("the live terminal, auth on", () => {
  let world: World;
  let id: string;
  beforeAll(async () => {
    world = await startWorld(MASTER);
    id = await world.session();
  });
  afterAll(() => world?.stop());

  test("a stranger is refused before the upgrade, the same for an existing and a missing session", async () => {
    const missing = crypto.randomUUID();
    for (const extra of [{}, headers("wrong-token"), headers(`${MASTER}x`)]) {
      const [existing, absent] = [
        await handshake(world.ws(id), extra),
        await handshake(world.ws(missing), extra),
      ];
      expect(existing.status).toBe(401);
      expect(existing.body).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 });
      expect(absent).toEqual({ ...existing, headers: absent.headers });
      expect(existing.headers).toContain('www-authenticate: Bearer realm="ag"');
    }
    // A bad ?token=, and the master token in the URL (never read from a query string).
    for (const query of ["?token=ags_bogus", `?token=${MASTER}`]) {
      const [existing, absent] = [
        await handshake(world.ws(id, query)),
        await handshake(world.ws(missing, query)),
      ];
      expect(existing.status).toBe(401);
      expect(absent.body).toEqual(existing.body);
    }
    await expect(openTerminal(world.ws(id))).rejects.toThrow(/failed/);
  });

  test("a browser page of another origin is refused (403 envelope) even with a valid token; ag's own page and a client without Origin are let in", async () => {
    const token = await sseToken(world);
    for (const credential of [headers(MASTER), {}]) {
      const query = "authorization" in credential ? "" : `?token=${token}`;
      for (const origin of [
        "http://evil.example",
        world.runtime.url.replace("127.0.0.1", "localhost"),
        "null",
      ]) {
        const foreign = await handshake(world.ws(id, query), { ...credential, Origin: origin });
        expect(foreign.status).toBe(403);
        expect(foreign.body).toEqual({
          error: `a WebSocket from ${origin} is refused: only ag's own pages may open one`,
          code: "FORBIDDEN",
          statusCode: 403,
        });
      }
    }
    // Refused before the credential was read: the single-use token is still good, from ag's own page.
    const own = await openTerminal(world.ws(id, `?token=${token}`), { Origin: world.runtime.url });
    await own.until((c) => snapshots(c).length === 1);
    own.close();
    const cli = await openTerminal(world.ws(id), headers(MASTER));
    await cli.until((c) => snapshots(c).length === 1);
    cli.close();
    await Promise.all([own.closed, cli.closed]);
    await until(() => world.runtime.tmux.outputListeners() === 0);
  });

  test("an authorized caller gets 404 for a missing session and 400 for a plain GET, before any upgrade", async () => {
    const absent = await handshake(world.ws(crypto.randomUUID()), headers(MASTER));
    expect(absent.status).toBe(404);
    expect(absent.body).toMatchObject({ code: "SESSION_NOT_FOUND", statusCode: 404 });
    const plain = await world.api("GET", `/v1/sessions/${id}/terminal`);
    expect(plain.status).toBe(400);
    expect(plain.body.code).toBe("VALIDATION_ERROR");
  });

  test("another tenant's key gets the 404 a missing session gets", async () => {
    const tenantKey = await newKey(world, ["sessions:read"], "other-tenant");
    const refused = await handshake(world.ws(id), headers(tenantKey));
    const absent = await handshake(world.ws(crypto.randomUUID()), headers(tenantKey));
    expect(refused.status).toBe(404);
    expect(refused.body!.code).toBe("SESSION_NOT_FOUND");
    expect(absent.status).toBe(404);
  });

  test("the master token in the header: a snapshot of the screen first, then new output as bytes", async () => {
    const client = await openTerminal(world.ws(id), headers(MASTER));
    await client.until((c) => snapshots(c).length === 1);
    const snapshot = client.texts()[0]!;
    expect(snapshot).toMatchObject({ type: "snapshot", cols: 120, rows: 40 });
    expect(snapshot.data.startsWith("\x1b[?1049l")).toBe(true);
    expect(snapshot.data).toContain("\x1b[H\x1b[2J");
    expect(snapshot.data).toContain("terminal ready");
    expect(snapshot.cursor.y).toBeGreaterThanOrEqual(1);
    // Typed from outside ag: the program's answer reaches the viewer as output bytes.
    tmux(world.socket, "send-keys", "-t", `${windowOf(world, id)}`, "from outside", "Enter");
    await client.until((c) => c.output().includes("you said: from outside"));
    client.close();
    await client.closed;
    await until(() => world.runtime.tmux.outputListeners() === 0);
  });

  test("a single-use token opens one terminal; used again it is refused", async () => {
    const token = await sseToken(world);
    const client = await openTerminal(world.ws(id, `?token=${token}`));
    await client.until((c) => snapshots(c).length === 1);
    const again = await handshake(world.ws(id, `?token=${token}`));
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ code: "UNAUTHORIZED", error: "invalid SSE token" });
    client.close();
  });

  test("control and input: typed into the pane as bytes, echoed back, audited", async () => {
    const writer = await newKey(world, ["sessions:read", "sessions:write"]);
    const client = await openTerminal(world.ws(id, `?token=${await sseToken(world, writer)}`));
    await client.until((c) => snapshots(c).length === 1);
    client.send({ type: "input", data: "too early\r" });
    await client.until((c) => last(c)?.type === "error");
    expect(last(client)).toMatchObject({ type: "error", code: "FORBIDDEN" });
    client.send({ type: "control" });
    await client.until((c) => last(c)?.type === "control");
    expect(last(client)).toEqual({ type: "control", granted: true });
    client.send({ type: "input", data: "héllo\r" });
    await client.until((c) => c.output().includes("you said: héllo"));
    // The line discipline echoed the keys, then the program answered; the early input never arrived.
    expect(client.output()).toContain("héllo\r\n");
    expect(client.output()).not.toContain("too early");
    const audit = await world.api("GET", "/v1/audit?limit=20");
    const record = audit.body.find((r: Json) => r.action === "session.terminal_control");
    expect(record).toMatchObject({
      actor: "sse-token(key:term-sessions:read-sessions:write-none)",
      target: id,
      outcome: "success",
      ip: "127.0.0.1",
    });

    // Released: watching again, input refused until control is asked (and audited) anew.
    client.send({ type: "release" });
    await client.until((c) => last(c)?.type === "control" && last(c)?.released === true);
    expect(last(client)).toEqual({ type: "control", granted: false, released: true });
    client.send({ type: "input", data: "after release\r" });
    await client.until((c) => last(c)?.type === "error");
    expect(last(client)).toMatchObject({ type: "error", code: "FORBIDDEN" });
    client.send({ type: "control" });
    await client.until((c) => last(c)?.type === "control" && last(c)?.granted === true);
    const grants = (await world.api("GET", "/v1/audit?limit=50")).body.filter(
      (r: Json) => r.action === "session.terminal_control" && r.target === id && r.outcome === "success",
    );
    expect(grants.length).toBe(2);
    expect(client.output()).not.toContain("after release");
    client.close();
  });

  test("a read-only key watches but cannot take control (refusal audited once)", async () => {
    const reader = await newKey(world, ["sessions:read"]);
    const client = await openTerminal(world.ws(id), headers(reader));
    await client.until((c) => snapshots(c).length === 1);
    for (const _ of [1, 2]) {
      client.send({ type: "control" });
      await client.until((c) => last(c)?.type === "control");
      expect(last(client)).toMatchObject({ type: "control", granted: false });
      expect(last(client)!.reason).toContain("sessions:write");
      client.messages.length = 0;
    }
    client.send({ type: "input", data: "not typed\r" });
    await client.until((c) => last(c)?.type === "error");
    expect(last(client)!.code).toBe("FORBIDDEN");
    await Bun.sleep(100);
    expect((await world.api("GET", `/v1/sessions/${id}/pane`)).body.content).not.toContain("not typed");
    const audit = await world.api("GET", "/v1/audit?limit=50");
    const refusals = audit.body.filter(
      (r: Json) => r.action === "session.terminal_control" && r.actor === "key:term-sessions:read-none",
    );
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ outcome: "denied", target: id });
    client.close();
  });

  test("bad messages are answered, never fatal", async () => {
    const client = await openTerminal(world.ws(id), headers(MASTER));
    await client.until((c) => snapshots(c).length === 1);
    for (const bad of ["not json", "[1,2]", '{"type":"launch"}', '{"type":"input","data":5}']) {
      client.messages.length = 0;
      client.send(bad);
      await client.until((c) => last(c)?.type === "error");
      expect(last(client)!.code).toBe("VALIDATION_ERROR");
    }
    client.socket.send(new Uint8Array([1, 2, 3]));
    await client.until((c) => last(c)?.type === "error");
    client.send({ type: "control" });
    await client.until((c) => last(c)?.type === "control");
    client.messages.length = 0;
    client.send({ type: "input", data: "x".repeat(64 * 1024 + 1) });
    await client.until((c) => last(c)?.type === "error");
    expect(last(client)!.code).toBe("PAYLOAD_TOO_LARGE");
    client.send({ type: "input", data: "still here\r" });
    await client.until((c) => c.output().includes("you said: still here"));
    client.close();
  });

  test("a client too slow for the output skips bytes, then gets a fresh snapshot once drained", async () => {
    const own = await world.session();
    const slow = await openRawTerminal(world.ws(own), headers(MASTER));
    await until(() => slow.frames.length === 1);
    slow.pause();
    tmux(world.socket, "send-keys", "-t", windowOf(world, own), "flood", "Enter");
    // The program is done when its answer is on the screen (ag keeps up; the client does not).
    await until(
      () =>
        tmux(world.socket, "capture-pane", "-p", "-t", windowOf(world, own)).stdout.includes(
          "you said: flood",
        ),
      20_000,
    );
    slow.resume();
    const snapshotsAt = () =>
      slow.frames.flatMap((f, i) => (f.text && f.message.type === "snapshot" ? [i] : []));
    await until(() => snapshotsAt().length >= 2, 10_000);
    const received = slow.frames.reduce((n, f) => n + (f.text ? 0 : f.bytes.length), 0);
    console.log(
      `slow client: ${received} bytes, ${snapshotsAt().length} snapshots, ${slow.frames.length} frames`,
    );
    // Bytes were skipped (the flood is ~21 MB), and the screen is whole again: the latest
    // snapshot and the bytes after it end with the program's answer.
    expect(received).toBeLessThan(300_000 * 68);
    await until(() => {
      const at = snapshotsAt().at(-1)!;
      const latest = slow.frames[at]!;
      const after = slow.frames.slice(at + 1).flatMap((f) => (f.text ? [] : [f.bytes]));
      const screen = (latest.text ? latest.message.data : "") + Buffer.concat(after).toString();
      return screen.includes("you said: flood");
    });
    slow.close();
    await until(() => world.runtime.tmux.outputListeners() === 0);
  }, 60_000); // the flood alone may take 20 s on a loaded machine: bun's default 5 s cut it short

  test("a client frame over 1 MiB closes the socket with 1009", async () => {
    const client = await openTerminal(world.ws(id), headers(MASTER));
    await client.until((c) => snapshots(c).length === 1);
    client.send({ type: "input", data: "x".repeat(1024 * 1024 + 1) });
    expect((await client.closed).code).toBe(1009);
    await until(() => world.runtime.tmux.outputListeners() === 0);
  });

  test("killing the window ends every viewer: `ended`, then close 1000; nothing is left watching", async () => {
    const own = await world.session();
    const viewers = [
      await openTerminal(world.ws(own), headers(MASTER)),
      await openTerminal(world.ws(own), headers(MASTER)),
    ];
    for (const client of viewers) await client.until((c) => snapshots(c).length >= 1);
    expect(world.runtime.tmux.outputListeners()).toBe(2);
    expect(tmux(world.socket, "kill-window", "-t", windowOf(world, own)).exitCode).toBe(0);
    for (const client of viewers) {
      expect(await client.closed).toEqual({ code: 1000, reason: "closed" });
      expect(last(client)).toEqual({ type: "ended", reason: "closed" });
    }
    await until(() => world.runtime.tmux.outputListeners() === 0);
    // The session ended with its window: it has no terminal any more.
    await until(() => world.runtime.sessions.get(own).status === "crashed");
    const after = await handshake(world.ws(own), headers(MASTER));
    expect(after.status).toBe(404);
  });

  test("killing the session ends its terminal", async () => {
    const own = await world.session();
    const client = await openTerminal(world.ws(own), headers(MASTER));
    await client.until((c) => snapshots(c).length === 1);
    expect((await world.api("DELETE", `/v1/sessions/${own}`)).status).toBe(200);
    expect((await client.closed).code).toBe(1000);
    expect(client.texts().some((m) => m.type === "ended")).toBe(true);
    await until(() => world.runtime.tmux.outputListeners() === 0);
  });
});

describe("the live terminal, auth off (loopback)", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld("");
  });
  afterAll(() => world?.stop());

  test("a page of ag's own origin needs no credential, as for the rest of the API; control is granted (all scopes)", async () => {
    const id = await world.session();
    const client = await openTerminal(world.ws(id), { Origin: world.runtime.url });
    await client.until((c) => snapshots(c).length === 1);
    expect(client.texts()[0]!.data).toContain("terminal ready");
    client.send({ type: "control" });
    await client.until((c) => last(c)?.type === "control");
    expect(last(client)).toEqual({ type: "control", granted: true });
    client.send({ type: "input", data: "local\r" });
    await client.until((c) => c.output().includes("you said: local"));
    client.close();
    await client.closed;
    await until(() => world.runtime.tmux.outputListeners() === 0);
  });

  test("a handshake without an Origin (no browser's) needs ag's token: refused before the upgrade, let in with it", async () => {
    const id = await world.session();
    const bare = await handshake(world.ws(id));
    expect(bare.status).toBe(401);
    expect(bare.body!.code).toBe("UNAUTHORIZED");
    expect(bare.body!.error).toContain(join(world.runtime.stateDir, "auth-token"));
    const client = await openTerminal(world.ws(id), headers(world.runtime.token()));
    await client.until((c) => snapshots(c).length === 1);
    client.close();
    await client.closed;
  });

  test("a page from another origin is refused before the upgrade", async () => {
    const id = await world.session();
    const foreign = await handshake(world.ws(id), { Origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body!.code).toBe("FORBIDDEN");
  });

  test("stopping the server closes open terminals with 1001", async () => {
    const id = await world.session();
    const client = await openTerminal(world.ws(id), { Origin: world.runtime.url });
    await client.until((c) => snapshots(c).length === 1);
    await world.runtime.drain(200);
    expect((await client.closed).code).toBe(1001);
  });
});
