import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { AgError } from "../../src/shared/errors.ts";
import { type TestApp, testApp } from "../helpers/app.ts";

/** Routes that fail in each way a real route can. */
const failing = new Elysia()
  .post("/v1/test/echo", ({ body }) => body, {
    body: Type.Object({ name: Type.String({ maxLength: 5 }), count: Type.Optional(Type.Integer()) }),
  })
  .get("/v1/test/domain", () => {
    throw new AgError("SESSION_BUSY", "session abc is waiting for a permission");
  })
  .get("/v1/test/crash", () => {
    throw new Error("database password is hunter2 at /secret/path.ts:12");
  })
  .get("/v1/test/query", ({ query }) => query, {
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200 }) }),
  });

async function envelopeOf(response: Response) {
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = await response.json();
  expect(Object.keys(body).sort()).toEqual(["code", "error", "statusCode"]);
  expect(body.statusCode).toBe(response.status);
  return body as { error: string; code: string; statusCode: number };
}

describe("every non-2xx is the {error, code, statusCode} envelope", () => {
  const app = testApp({ plugins: [failing] });

  test("a body that fails validation → 400 naming the field", async () => {
    const response = await app.request("POST", "/v1/test/echo", { body: { name: "far too long" } });
    expect(response.status).toBe(400);
    const body = await envelopeOf(response);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.error).toContain("body.name");
  });

  test("a missing required field → 400", async () => {
    const body = await envelopeOf(await app.request("POST", "/v1/test/echo", { body: {} }));
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.error).toContain("name");
  });

  test("a query out of range → 400 naming the parameter", async () => {
    const body = await envelopeOf(await app.request("GET", "/v1/test/query?limit=500"));
    expect(body).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 400 });
    expect(body.error).toContain("query.limit");
  });

  test("malformed JSON → 400", async () => {
    const body = await envelopeOf(await app.request("POST", "/v1/test/echo", { body: '{"name": ' }));
    expect(body).toEqual({
      error: "the request body is not valid JSON",
      code: "VALIDATION_ERROR",
      statusCode: 400,
    });
  });

  test("a valid body passes through", async () => {
    const response = await app.request("POST", "/v1/test/echo", { body: { name: "ok", count: 2 } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ name: "ok", count: 2 });
  });

  test("an unknown route → 404 NOT_FOUND", async () => {
    const body = await envelopeOf(await app.request("GET", "/v1/nothing/here"));
    expect(body).toEqual({ error: "no route GET /v1/nothing/here", code: "NOT_FOUND", statusCode: 404 });
  });

  test("a wrong method → 404 envelope", async () => {
    expect((await envelopeOf(await app.request("DELETE", "/v1/health"))).code).toBe("NOT_FOUND");
  });

  test("a domain error keeps its code and the status the catalog gives it", async () => {
    const body = await envelopeOf(await app.request("GET", "/v1/test/domain"));
    expect(body).toEqual({
      error: "session abc is waiting for a permission",
      code: "SESSION_BUSY",
      statusCode: 409,
    });
  });

  test("an unexpected error → 500 with no internals, details only in the log", async () => {
    const response = await app.request("GET", "/v1/test/crash");
    const text = await response.clone().text();
    const body = await envelopeOf(response);
    expect(body).toEqual({ error: "internal error", code: "INTERNAL_ERROR", statusCode: 500 });
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("/secret/path");
    expect(app.logs.join("\n")).toContain("hunter2");
  });

  test("a body over the limit → 413 before it is read", async () => {
    const small = testApp({ plugins: [failing], maxBodyBytes: 64 });
    const response = await small.request("POST", "/v1/test/echo", { body: { name: "x".repeat(200) } });
    const body = await envelopeOf(response);
    expect(body.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("an unknown session → 404 SESSION_NOT_FOUND", async () => {
    const body = await envelopeOf(
      await app.request("GET", "/v1/sessions/00000000-0000-4000-8000-000000000000"),
    );
    expect(body.code).toBe("SESSION_NOT_FOUND");
  });
});

describe("a body without Content-Length (chunked)", () => {
  const echo = new Elysia().post("/v1/test/echo", ({ body }) => body, {
    body: Type.Object({ name: Type.String() }),
  });
  // ag's own token, as the CLI sends it (a POST without an Origin needs it).
  const streamed = (app: TestApp, text: string, chunk = 16) =>
    new Request("http://localhost/v1/test/echo", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${app.token}` },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < text.length; i += chunk)
            controller.enqueue(new TextEncoder().encode(text.slice(i, i + chunk)));
          controller.close();
        },
      }),
    });

  test("is read and parsed within the limit", async () => {
    const app = testApp({ plugins: [echo], maxBodyBytes: 1024 });
    const response = await app.handle(streamed(app, '{"name":"streamed"}'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ name: "streamed" });
  });

  test("is cut at the limit with a 413 envelope", async () => {
    const app = testApp({ plugins: [echo], maxBodyBytes: 1024 });
    const response = await app.handle(streamed(app, JSON.stringify({ name: "x".repeat(5000) })));
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("malformed JSON is a 400", async () => {
    const app = testApp({ plugins: [echo], maxBodyBytes: 1024 });
    const response = await app.handle(streamed(app, '{"name":'));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("the request body is not valid JSON");
  });
});

test("a response that breaks its own schema is a 500 (our bug), never a 400", async () => {
  const broken = new Elysia().get(
    "/v1/test/broken",
    () => ({ n: "not a number" }) as unknown as { n: number },
    {
      response: Type.Object({ n: Type.Integer() }),
    },
  );
  const app = testApp({ plugins: [broken] });
  for (let i = 0; i < 2; i++) {
    const response = await app.request("GET", "/v1/test/broken");
    expect(response.status).toBe(500);
    expect((await response.json()).code).toBe("INTERNAL_ERROR");
  }
});
