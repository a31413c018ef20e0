import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { elysiaInProduction } from "../../scripts/production-mode.ts";
import { createJsonScanner, DEFAULT_BODY_LIMITS } from "../../src/server/body.ts";
import { createRepeatFilter } from "../../src/shared/log.ts";
import { testApp } from "../helpers/app.ts";

const MASTER = "master-token-for-body-bounds";
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const bytes = (text: string) => new TextEncoder().encode(text);

function scan(text: string, limits = { depth: 4, members: 10 }, chunk = text.length || 1): string | null {
  const scanner = createJsonScanner(limits);
  try {
    const all = bytes(text);
    for (let i = 0; i < all.length; i += chunk) scanner.feed(all.subarray(i, i + chunk));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("the JSON scanner", () => {
  test("refuses nesting past the depth, at the byte that passes it", () => {
    expect(scan(nested(4))).toBeNull();
    expect(scan(nested(5))).toBe("request body nests deeper than 4 levels");
    expect(scan(`{"a":{"b":{"c":{"d":{}}}}}`)).toBe("request body nests deeper than 4 levels");
    // The rest of a huge body is never looked at.
    expect(scan(`${nested(5)}${"x".repeat(1000)}`)).not.toBeNull();
  });

  test("counts members across the whole body", () => {
    expect(scan("[1,2,3,4,5,6,7,8,9]")).toBeNull();
    expect(scan("[1,2,3,4,5,6,7,8,9,10,11]")).toBe("request body has more than 10 members");
    expect(scan('[{"a":1,"b":2},{"c":3,"d":4},{"e":5,"f":6}]')).toBeNull();
    expect(scan('[{"a":1,"b":2,"c":3},{"d":4,"e":5,"f":6},{"g":7,"h":8}]')).toBe(
      "request body has more than 10 members",
    );
  });

  test("brackets, commas and escaped quotes inside strings are text", () => {
    expect(scan(JSON.stringify({ a: "[[[[[[[[,,,,,,,,,,,,{{{{{{" }))).toBeNull();
    expect(scan(JSON.stringify({ a: 'a \\" quote [[[[[[ \\\\', b: "]]]]]" }))).toBeNull();
    expect(scan(JSON.stringify(["x\\", "[[[[[["]))).toBeNull();
  });

  test("gives the same answer however the bytes are chunked", () => {
    const texts = [nested(5), JSON.stringify({ a: 'q\\"[[[[[', b: [1, 2] }), "[1,2,3,4,5,6,7,8,9,10,11]"];
    for (const text of texts) {
      const whole = scan(text);
      for (const chunk of [1, 2, 3, 7]) expect(scan(text, undefined, chunk)).toBe(whole);
    }
  });

  test("multi-byte characters are never brackets", () => {
    expect(scan(JSON.stringify({ a: "ß€😀[".repeat(50) }))).toBeNull();
  });
});

/** A route as the real ones: a body schema, an answer. */
const echo = new Elysia().post("/v1/test/echo", ({ body }) => body, {
  body: Type.Object({ env: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 4 }))) }),
});

async function envelopeOf(response: Response) {
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = (await response.json()) as { error: string; code: string; statusCode: number };
  expect(body.statusCode).toBe(response.status);
  return body;
}

describe("every body is bounded before it is parsed", () => {
  test("a deep body to a hook route, without any secret → 400, and one log line for many", async () => {
    const app = testApp({ authToken: MASTER });
    for (let i = 0; i < 5; i++) {
      const response = await app.request("POST", "/v1/hooks/claude/Stop", { body: nested(30_000) });
      expect(response.status).toBe(400);
      expect(await envelopeOf(response)).toEqual({
        error: "request body nests deeper than 64 levels",
        code: "VALIDATION_ERROR",
        statusCode: 400,
      });
    }
    const refusals = app.logs.filter((line) => line.includes("refused POST /v1/hooks/claude/Stop"));
    expect(refusals).toHaveLength(1);
  });

  test("a deep body to POST /v1/sessions → 400 (no-auth mode reads it)", async () => {
    const app = testApp();
    const body = await envelopeOf(await app.request("POST", "/v1/sessions", { body: nested(100_000) }));
    expect(body.error).toBe("request body nests deeper than 64 levels");
  });

  test("a body of too many members → 400; a wide legal one passes to the schema", async () => {
    const app = testApp({ plugins: [echo] });
    const wide = JSON.stringify({
      env: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [i, "x"])),
    });
    const tooWide = `[${"0,".repeat(DEFAULT_BODY_LIMITS.members)}0]`;
    expect((await envelopeOf(await app.request("POST", "/v1/test/echo", { body: tooWide }))).error).toBe(
      "request body has more than 100000 members",
    );
    expect((await app.request("POST", "/v1/test/echo", { body: wide })).status).toBe(200);
  });

  test("a form's fields are counted too, and forms still reach the route as fields", async () => {
    const app = testApp({ plugins: [echo] });
    const form = (body: string) =>
      app.request("POST", "/v1/test/echo", {
        body,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    expect((await envelopeOf(await form("a&".repeat(200_000)))).error).toContain("members");
    expect((await form("env=x")).status).toBe(400);
  });

  test("a multipart field holding deep JSON is not parsed by the framework", async () => {
    const app = testApp({ plugins: [echo] });
    const form = new FormData();
    form.set("env", nested(50_000));
    const response = await app.handle(
      new Request("http://localhost:9100/v1/test/echo", {
        method: "POST",
        body: form,
        headers: { authorization: `Bearer ${app.token}` },
      }),
    );
    expect(response.status).toBe(400);
    expect((await envelopeOf(response)).code).toBe("VALIDATION_ERROR");
  });

  test("a validation message names the field but never echoes a long key or value", async () => {
    const app = testApp({ plugins: [echo] });
    const key = "k".repeat(20_000);
    const response = await app.request("POST", "/v1/test/echo", {
      body: { env: { [key]: "v".repeat(20_000) } },
    });
    const body = await envelopeOf(response);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.error).toStartWith("invalid body.env.kkkk");
    expect(body.error.length).toBeLessThan(400);
    expect(body.error).not.toContain("vvvv");
  });
});

describe("the binary's framework runs in production mode", () => {
  test("the build fixes the installed Elysia's mode, whatever NODE_ENV says at run time", async () => {
    const path = join(import.meta.dir, "..", "..", "node_modules", "elysia", "dist", "error.mjs");
    const patched = elysiaInProduction(await Bun.file(path).text());
    expect(patched).toContain("isProduction = true");
    expect(patched).not.toContain("env?.NODE_ENV");
  });

  test("a moved decision fails the build instead of shipping development mode", () => {
    expect(() => elysiaInProduction("const isProduction = process.env.NODE_ENV === 'production'")).toThrow(
      "update scripts/production-mode.ts",
    );
  });
});

describe("the repeat filter", () => {
  test("lets the first of a kind through, holds the rest a window, then counts them", () => {
    let now = 0;
    const filter = createRepeatFilter({ windowMs: 1000, now: () => now });
    expect(filter.admit("a")).toBe(0);
    expect(filter.admit("a")).toBeNull();
    expect(filter.admit("a")).toBeNull();
    expect(filter.admit("b")).toBe(0);
    now = 1000;
    expect(filter.admit("a")).toBe(2);
    expect(filter.admit("a")).toBeNull();
  });

  test("lets at most so many lines of all kinds through a window; the held ones are counted", () => {
    let now = 0;
    const filter = createRepeatFilter({ windowMs: 1000, maxPerWindow: 2, now: () => now });
    expect([filter.admit("a"), filter.admit("b"), filter.admit("c"), filter.admit("d")]).toEqual([
      0,
      0,
      null,
      null,
    ]);
    expect(filter.admit("c")).toBeNull();
    now = 1000;
    expect(filter.admit("c")).toBe(2);
  });

  test("remembers a bounded number of kinds", () => {
    const filter = createRepeatFilter({ maxKeys: 2, now: () => 0 });
    filter.admit("a");
    filter.admit("b");
    filter.admit("c");
    expect(filter.admit("a")).toBe(0);
    expect(filter.admit("c")).toBeNull();
  });
});
