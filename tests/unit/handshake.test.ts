import { describe, expect, test } from "bun:test";
import {
  compareVersions,
  MIN_PROTOCOL_VERSION,
  negotiate,
  PROTOCOL_VERSION,
  SERVER_CAPABILITIES,
} from "../../src/protocol/index.ts";
import { handshakeRoutes } from "../../src/server/routes/handshake.ts";
import { testApp } from "../helpers/app.ts";

const SPEC_CAPABILITIES = [
  "session.create",
  "session.resume",
  "session.approve",
  "session.transcript",
  "session.transcript.cursor",
  "session.events.sse",
  "session.screenshot",
  "hooks.pre_tool_use",
  "hooks.post_tool_use",
  "hooks.notification",
  "hooks.stop",
  "swarm",
  "metrics",
];

const app = testApp({ plugins: [handshakeRoutes()] });
const handshake = (body: unknown) => app.request("POST", "/v1/handshake", { body });

test("the server speaks protocol 1, accepts 1 at least, and offers SPEC's capabilities", () => {
  expect(PROTOCOL_VERSION).toBe("1");
  expect(MIN_PROTOCOL_VERSION).toBe("1");
  expect<string[]>([...SERVER_CAPABILITIES]).toEqual(SPEC_CAPABILITIES);
});

describe("compatible clients: 200", () => {
  test("negotiates the intersection and warns about unknown capabilities", async () => {
    const response = await handshake({
      protocolVersion: "1",
      clientCapabilities: ["swarm", "teleport", "session.create", "session.create", "hooks.stop"],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      protocolVersion: "1",
      serverCapabilities: SPEC_CAPABILITIES,
      negotiatedCapabilities: ["session.create", "hooks.stop", "swarm"],
      warnings: ['unknown capability "teleport"'],
      compatible: true,
    });
  });

  test('"1.0" is the same version as "1": no warning', async () => {
    const response = await handshake({ protocolVersion: "1.0", clientCapabilities: ["metrics"] });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      negotiatedCapabilities: ["metrics"],
      warnings: [],
      compatible: true,
    });
  });

  test.each(["2", "1.1", "10.0"])("a newer client (%p) is served with a version-skew warning", async (v) => {
    const response = await handshake({ protocolVersion: v, clientCapabilities: [] });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.compatible).toBe(true);
    expect(body.protocolVersion).toBe("1");
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toContain("version skew");
    expect(body.warnings[0]).toContain(v);
  });

  test("clientCapabilities may be left out, and unknown fields are no error", async () => {
    const response = await handshake({ protocolVersion: "1", clientName: "a-newer-client" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      negotiatedCapabilities: [],
      warnings: [],
      compatible: true,
    });
  });
});

describe("older clients: 409", () => {
  test("the body is both the error envelope and the handshake answer", async () => {
    const response = await handshake({ protocolVersion: "0", clientCapabilities: ["session.create", "x"] });
    expect(response.status).toBe(409);
    const body = await response.json();
    expect(body).toEqual({
      error: body.error,
      code: "PROTOCOL_VERSION_UNSUPPORTED",
      statusCode: 409,
      protocolVersion: "1",
      serverCapabilities: SPEC_CAPABILITIES,
      negotiatedCapabilities: ["session.create"],
      warnings: [body.error, 'unknown capability "x"'],
      compatible: false,
    });
    expect(body.error).toContain("below the server minimum 1");
  });

  test("minor versions count against a major.minor minimum", async () => {
    const strict = testApp({
      plugins: [handshakeRoutes({ version: "2.1", minimum: "1.5", capabilities: ["metrics"] })],
    });
    const ask = (protocolVersion: string) =>
      strict.request("POST", "/v1/handshake", { body: { protocolVersion, clientCapabilities: ["metrics"] } });

    expect((await ask("1.4")).status).toBe(409);
    expect((await ask("1")).status).toBe(409);
    const atMinimum = await ask("1.5");
    expect(atMinimum.status).toBe(200);
    expect(await atMinimum.json()).toEqual({
      protocolVersion: "2.1",
      serverCapabilities: ["metrics"],
      negotiatedCapabilities: ["metrics"],
      warnings: [],
      compatible: true,
    });
    expect((await (await ask("2.2")).json()).warnings[0]).toContain("version skew");
  });
});

describe("invalid requests: 400", () => {
  test.each([["abc"], ["v1"], [""], ["1.2.3"], [" 1"], ["1."], ["-1"], ["1e3"]])(
    "protocolVersion %p is not a version",
    async (protocolVersion) => {
      const response = await handshake({ protocolVersion, clientCapabilities: [] });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 400 });
      expect(body.error).toContain("body.protocolVersion");
    },
  );

  test.each([
    ["a missing protocolVersion", { clientCapabilities: [] }, "body.protocolVersion"],
    ["a numeric protocolVersion", { protocolVersion: 1 }, "body.protocolVersion"],
    [
      "capabilities that are not strings",
      { protocolVersion: "1", clientCapabilities: [1] },
      "body.clientCapabilities",
    ],
    [
      "more than 256 capabilities",
      { protocolVersion: "1", clientCapabilities: Array(257).fill("swarm") },
      "body.clientCapabilities",
    ],
  ])("%s", async (_, body, field) => {
    const response = await handshake(body);
    expect(response.status).toBe(400);
    const error = await response.json();
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.error).toContain(field);
  });
});

test("OpenAPI documents the 409 body with both sets of fields", async () => {
  const doc = await (await app.request("GET", "/v1/openapi.json")).json();
  const refused = doc.paths["/v1/handshake"].post.responses["409"].content["application/json"].schema;
  expect(refused.required).toEqual(
    expect.arrayContaining(["error", "code", "statusCode", "compatible", "negotiatedCapabilities"]),
  );
});

describe("negotiate", () => {
  test("keeps the server's order and lists each unknown capability once", () => {
    const { response, refusal } = negotiate({
      protocolVersion: "1",
      clientCapabilities: ["metrics", "zzz", "session.resume", "zzz"],
    });
    expect(refusal).toBeNull();
    expect(response.negotiatedCapabilities).toEqual(["session.resume", "metrics"]);
    expect(response.warnings).toEqual(['unknown capability "zzz"']);
  });

  test("compares major, then minor, numerically", () => {
    expect(compareVersions("1", "1.0")).toBe(0);
    expect(compareVersions("1.10", "1.9")).toBeGreaterThan(0);
    expect(compareVersions("2", "10")).toBeLessThan(0);
    expect(compareVersions("01", "1")).toBe(0);
  });
});
