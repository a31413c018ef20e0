import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MASTER, type Principal } from "../../src/auth/principal.ts";
import { withHostColumn } from "../../src/cli/views.ts";
import { loadConfig } from "../../src/config/index.ts";
import { acceptForwarded, forwardToken, newHostSecret } from "../../src/fleet/credential.ts";
import { outsideFleet } from "../../src/fleet/index.ts";
import { AgError } from "../../src/shared/errors.ts";
import { configError } from "../helpers/config.ts";
import { tempDir } from "../helpers/temp.ts";

describe("the credential a forwarded request carries", () => {
  const secret = newHostSecret();
  const tenantKey: Principal = {
    kind: "key",
    actor: "key:ci",
    scopes: new Set(["sessions:read", "sessions:write"]),
    tenantId: "acme",
    sessionId: null,
    keyId: "k1",
  };

  test("the owner's own secret names the caller: its scopes, tenant and session, as a key of the forwarding host", () => {
    const key = acceptForwarded(forwardToken(secret, "b", tenantKey), secret);
    expect(key).toMatchObject({
      name: "fleet:b/key:ci",
      scopes: ["sessions:read", "sessions:write"],
      tenantId: "acme",
      sessionId: null,
    });
    expect(acceptForwarded(forwardToken(secret, "c", MASTER), secret)).toMatchObject({
      scopes: ["*"],
      tenantId: null,
    });
  });

  test("another host's secret, a forged or altered caller, or an API key are not accepted", () => {
    expect(acceptForwarded(forwardToken(newHostSecret(), "b", MASTER), secret)).toBeNull();
    const token = forwardToken(secret, "b", tenantKey);
    const [own, caller] = token.split(".") as [string, string];
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(caller, "base64url").toString()), s: ["bogus"] }),
    ).toString("base64url");
    expect(acceptForwarded(`${own}.${widened}`, secret)).toBeNull();
    expect(acceptForwarded(`${own}.not-json`, secret)).toBeNull();
    expect(acceptForwarded(own, secret)).toBeNull();
    expect(acceptForwarded("agk_somekey", secret)).toBeNull();
  });
});

describe("the fleet settings", () => {
  function load(env: Record<string, string>, file?: unknown) {
    const home = tempDir("ag-fleet-config-");
    if (file) {
      mkdirSync(join(home, ".svc"), { recursive: true });
      writeFileSync(join(home, ".svc", "config.json"), JSON.stringify(file));
    }
    return loadConfig({ env, home, cwd: home, containerRoot: join(home, "rootfs") });
  }

  test("off by default; each field from its variable, over the config file's", () => {
    expect(load({}).config.fleet).toEqual({ databaseUrl: "", hostName: "", leaseMs: 15_000 });
    const { config, sources } = load(
      { SVC_FLEET_DATABASE_URL: "postgres://db/fleet", SVC_FLEET_LEASE_MS: "2000" },
      { fleet: { hostName: "build-box", leaseMs: 5000 } },
    );
    expect(config.fleet).toEqual({
      databaseUrl: "postgres://db/fleet",
      hostName: "build-box",
      leaseMs: 2000,
    });
    expect(sources.fleet).toBe("environment (SVC_FLEET_DATABASE_URL, SVC_FLEET_LEASE_MS)");
  });

  test("a bad value stops start-up naming the field, and never echoes the database URL", () => {
    expect(configError(() => load({ SVC_FLEET_LEASE_MS: "10" })).message).toContain("fleet.leaseMs");
    expect(configError(() => load({ SVC_FLEET_HOST_NAME: "no spaces" })).message).toContain("fleet.hostName");
    const bad = configError(() =>
      load({ SVC_FLEET_DATABASE_URL: "postgres://u:hunter2@db", SVC_FLEET_LEASE_MS: "x" }),
    );
    expect(bad.message).not.toContain("hunter2");
  });
});

describe("a create's host outside a fleet", () => {
  const call = (body: Record<string, unknown>) => ({
    request: new Request("http://127.0.0.1/v1/sessions", { method: "POST" }),
    route: "/v1/sessions",
    params: {},
    body,
  });

  test("auto is this host; a named host is refused, naming the setting", async () => {
    const body: Record<string, unknown> = { workDir: "/tmp", host: "auto" };
    expect(await outsideFleet(call(body))).toBeUndefined();
    expect(body).toEqual({ workDir: "/tmp" });
    const refused = await outsideFleet(call({ workDir: "/tmp", host: "a" })).catch((e) => e);
    expect(refused).toBeInstanceOf(AgError);
    expect([refused.code, refused.message]).toEqual([
      "VALIDATION_ERROR",
      'host "a": this ag is not in a fleet (fleet.databaseUrl is not set; docs/fleet.md)',
    ]);
  });
});

describe("ag list in a fleet", () => {
  test("a HOST column after NAME, offline hosts marked", () => {
    const [headers, rows] = withHostColumn(
      ["ID", "NAME", "STATUS"],
      [
        ["1", "one", "idle"],
        ["2", "two", "idle"],
      ],
      [
        { host: "a", hostOnline: true },
        { host: "b", hostOnline: false },
      ],
    );
    expect(headers).toEqual(["ID", "NAME", "HOST", "STATUS"]);
    expect(rows).toEqual([
      ["1", "one", "a", "idle"],
      ["2", "two", "b (offline)", "idle"],
    ]);
  });
});
