import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { Elysia, t } from "elysia";
import { type HttpServer, listen } from "../../src/server/listen.ts";
import { testApp } from "../helpers/app.ts";

/**
 * Bun counts a connection idle while its handler works and cuts it after the idle limit (a 16 s
 * handler was reset at 12 s with the default 10 s). ag's handlers can take long on purpose (a
 * create waits for the agent, a verification runs a build), so the limit is lifted while a
 * request that is in is being answered, and only then. Here with a 1 s limit.
 */
let server: HttpServer;
/** ag's own token: the requests below change state without an Origin, as the CLI's do. */
let token: string;

beforeAll(async () => {
  const slow = new Elysia()
    .post(
      "/v1/test/slow",
      async ({ query }) => {
        await Bun.sleep(query.ms);
        return { done: true };
      },
      { query: t.Object({ ms: t.Numeric() }) },
    )
    .post("/v1/test/echo", ({ body }) => body, { body: t.Object({ ms: t.Integer() }) });
  const app = testApp({ plugins: [slow] });
  token = app.token;
  server = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: 1 << 20, idleTimeoutS: 1 });
});
afterAll(async () => {
  await server?.stop(0);
});

/** Resolves with how long the server kept the socket open after `write`, or -1 past `ms`. */
function openFor(write: (socket: Socket) => void, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    const started = Date.now();
    const guard = setTimeout(() => {
      socket.destroy();
      resolve(-1);
    }, ms);
    socket.on("data", () => {});
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(guard);
      resolve(Date.now() - started);
    });
    write(socket);
  });
}

describe("the idle limit", () => {
  test("a handler slower than the limit still gets its answer to the client", async () => {
    // Without a body, as POST /verify, /approve or /interrupt come: Bun cuts those (with a 1 s
    // limit, at its 4 s tick); one with a body it was not seen to cut.
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/test/slow?ms=6000`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ done: true });
  }, 15_000);

  test("a client that stops sending its body is still cut at the limit", async () => {
    const closedAfter = await openFor((socket) => {
      socket.write(
        `POST /v1/test/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`,
      );
    }, 10_000);
    expect(closedAfter).toBeGreaterThan(0);
    expect(closedAfter).toBeLessThan(8_000);
  }, 15_000);

  test("a keep-alive connection idle after its answer is closed at the limit", async () => {
    const body = JSON.stringify({ ms: 10 });
    const closedAfter = await openFor((socket) => {
      socket.write(
        `POST /v1/test/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
    }, 10_000);
    expect(closedAfter).toBeGreaterThan(0);
    expect(closedAfter).toBeLessThan(8_000);
  }, 15_000);
});
