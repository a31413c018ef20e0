import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isInContainer, type LoadOptions, loadConfig, SETTINGS } from "../../src/config/index.ts";
import { configError } from "../helpers/config.ts";
import { tempDir } from "../helpers/temp.ts";

/** A machine with no config files, no environment and no container. */
function world() {
  const root = tempDir("ag-config-");
  const home = join(root, "home");
  const cwd = join(root, "cwd");
  const notContainer = join(root, "rootfs");
  for (const d of [home, cwd, notContainer]) mkdirSync(d, { recursive: true });
  const load = (options: LoadOptions = {}) =>
    loadConfig({ env: {}, home, cwd, containerRoot: notContainer, ...options });
  const writeJson = (path: string, value: unknown) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
    return path;
  };
  return { root, home, cwd, notContainer, load, writeJson };
}

describe("defaults", () => {
  test("match SPEC's table", () => {
    const w = world();
    const { config, sources } = w.load();
    expect(config).toMatchObject({
      port: 9100,
      host: "127.0.0.1",
      baseUrl: "http://127.0.0.1:9100",
      authToken: "",
      stateDir: join(w.home, ".svc"),
      logLevel: "info",
      dashboardEnabled: true,
      dashboardUrl: "http://localhost:9100/dashboard",
      maxSessions: null,
      idleTimeoutMs: 600000,
      stallThresholdMs: 120000,
      permissionMode: "default",
      muxSession: "svc",
      tmuxSocket: "svc",
      agentDataDir: null,
      sseIdleMs: 120000,
      sseClientTimeoutMs: 300000,
      hookTimeoutMs: 10000,
      shutdownGraceMs: 15000,
      shutdownHardMs: 20000,
      webhooks: [],
      otelEnabled: false,
      otelOtlpEndpoint: "http://localhost:4318",
      otelSampleRate: 1,
      memoryBridge: { enabled: true, persistPath: null, reaperIntervalMs: 3600000 },
      verificationProtocol: { autoVerifyOnStop: false, criticalOnly: false },
      chatVerbose: false,
      tenantWorkdirs: {},
    });
    expect(sources.port).toBe("default");
  });

  test("every variable of SPEC's configuration table is a setting", () => {
    const specVariables = [
      "SVC_PORT",
      "SVC_HOST",
      "SVC_BASE_URL",
      "SVC_AUTH_TOKEN",
      "SVC_STATE_DIR",
      "SVC_LOG_LEVEL",
      "SVC_DASHBOARD_ENABLED",
      "SVC_DASHBOARD_URL",
      "SVC_MAX_SESSIONS",
      "SVC_IDLE_TIMEOUT_MS",
      "SVC_STALL_THRESHOLD_MS",
      "SVC_PERMISSION_MODE",
      "SVC_MUX_SESSION",
      "AGENT_DATA_DIR",
      "SVC_SSE_IDLE_MS",
      "SVC_SSE_CLIENT_TIMEOUT_MS",
      "SVC_HOOK_TIMEOUT_MS",
      "SVC_SHUTDOWN_GRACE_MS",
      "SVC_SHUTDOWN_HARD_MS",
      "SVC_WEBHOOKS",
      "MODEL_FAST",
      "MODEL_STANDARD",
      "MODEL_POWER",
      "SVC_OTEL_ENABLED",
      "SVC_OTEL_OTLP_ENDPOINT",
      "SVC_OTEL_SERVICE_NAME",
      "SVC_OTEL_SAMPLE_RATE",
      "SVC_TMUX_SOCKET",
    ];
    const known = new Set(SETTINGS.map((s) => ("env" in s ? s.env : undefined)));
    expect(specVariables.filter((v) => !known.has(v))).toEqual([]);
  });

  test("the base and dashboard URLs follow a configured port", () => {
    const { config } = world().load({ env: { SVC_PORT: "9200" } });
    expect(config.baseUrl).toBe("http://127.0.0.1:9200");
    expect(config.dashboardUrl).toBe("http://localhost:9200/dashboard");
  });
});

describe("precedence: flags > environment > --config > ./svc.config.json > ~/.svc/config.json > defaults", () => {
  test("each level beats the next", () => {
    const w = world();
    w.writeJson(join(w.home, ".svc", "config.json"), { port: 1001, authToken: "user", stallThresholdMs: 1 });
    w.writeJson(join(w.cwd, "svc.config.json"), { port: 1002, authToken: "cwd" });
    const explicit = w.writeJson(join(w.root, "explicit.json"), { port: 1003 });

    expect(w.load().config.port).toBe(1002);
    expect(w.load().config.authToken).toBe("cwd");
    expect(w.load().config.stallThresholdMs).toBe(1);

    const withConfig = w.load({ configPath: explicit });
    expect(withConfig.config.port).toBe(1003);
    expect(withConfig.sources.port).toBe(`--config ${explicit}`);
    expect(withConfig.config.authToken).toBe("cwd");

    const withEnv = w.load({ configPath: explicit, env: { SVC_PORT: "1004" } });
    expect(withEnv.config.port).toBe(1004);
    expect(withEnv.sources.port).toBe("environment (SVC_PORT)");

    const withFlag = w.load({ configPath: explicit, env: { SVC_PORT: "1004" }, flags: { port: 1005 } });
    expect(withFlag.config.port).toBe(1005);
    expect(withFlag.sources.port).toBe("command line");
  });

  test("the user file beats the defaults and is labelled", () => {
    const w = world();
    w.writeJson(join(w.home, ".svc", "config.json"), { port: 1001 });
    const { config, sources } = w.load();
    expect(config.port).toBe(1001);
    expect(sources.port).toBe("~/.svc/config.json");
  });

  test("a --config path is relative to the working directory", () => {
    const w = world();
    w.writeJson(join(w.cwd, "conf", "ag.json"), { port: 1234 });
    expect(w.load({ configPath: "conf/ag.json" }).config.port).toBe(1234);
  });

  test("object settings merge key by key across levels", () => {
    const w = world();
    w.writeJson(join(w.home, ".svc", "config.json"), { memoryBridge: { reaperIntervalMs: 5000 } });
    w.writeJson(join(w.cwd, "svc.config.json"), { memoryBridge: { enabled: false } });
    expect(w.load().config.memoryBridge).toEqual({
      enabled: false,
      persistPath: null,
      reaperIntervalMs: 5000,
    });
  });

  test("environment values are typed", () => {
    const { config } = world().load({
      env: {
        SVC_DASHBOARD_ENABLED: "false",
        SVC_MAX_SESSIONS: "12",
        SVC_OTEL_SAMPLE_RATE: "0.25",
        SVC_PERMISSION_MODE: "acceptEdits",
        SVC_LOG_LEVEL: "debug",
        SVC_AUTH_TOKEN: "s3cret",
      },
    });
    expect(config.dashboardEnabled).toBe(false);
    expect(config.maxSessions).toBe(12);
    expect(config.otelSampleRate).toBe(0.25);
    expect(config.permissionMode).toBe("acceptEdits");
    expect(config.logLevel).toBe("debug");
    expect(config.authToken).toBe("s3cret");
  });

  test("an empty environment variable counts as unset", () => {
    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), { port: 1002 });
    expect(w.load({ env: { SVC_PORT: "" } }).config.port).toBe(1002);
  });

  test("SVC_WEBHOOKS takes a JSON array or comma-separated URLs", () => {
    const w = world();
    const json = w.load({
      env: { SVC_WEBHOOKS: '[{"url":"http://127.0.0.1:1/h","events":["session.created"],"secret":"x"}]' },
    });
    expect(json.config.webhooks).toEqual([
      { url: "http://127.0.0.1:1/h", events: ["session.created"], secret: "x" },
    ]);
    const list = w.load({ env: { SVC_WEBHOOKS: "http://a.test/1, http://b.test/2" } });
    expect(list.config.webhooks).toEqual([{ url: "http://a.test/1" }, { url: "http://b.test/2" }]);
  });

  test("paths expand ~ and resolve against the working directory", () => {
    const w = world();
    expect(w.load({ env: { SVC_STATE_DIR: "~/state" } }).config.stateDir).toBe(join(w.home, "state"));
    expect(w.load({ env: { SVC_STATE_DIR: "rel/state" } }).config.stateDir).toBe(join(w.cwd, "rel", "state"));
  });
});

describe("container detection", () => {
  test("/.dockerenv makes the default bind address 0.0.0.0", () => {
    const w = world();
    const fake = join(w.root, "docker-root");
    w.writeJson(join(fake, ".dockerenv"), "");
    expect(isInContainer(fake)).toBe(true);
    const { config, sources } = w.load({ containerRoot: fake });
    expect(config.host).toBe("0.0.0.0");
    expect(sources.host).toBe("default (container detected)");
  });

  test.each(["docker", "containerd"])("PID 1's cgroup naming %s counts", (word) => {
    const w = world();
    const fake = join(w.root, `cg-${word}`);
    w.writeJson(join(fake, "proc", "1", "cgroup"), `0::/system.slice/${word}-abc.scope\n`);
    expect(w.load({ containerRoot: fake }).config.host).toBe("0.0.0.0");
  });

  test("a plain machine binds loopback", () => {
    const w = world();
    w.writeJson(join(w.notContainer, "proc", "1", "cgroup"), "0::/init.scope\n");
    expect(isInContainer(w.notContainer)).toBe(false);
    expect(w.load().config.host).toBe("127.0.0.1");
  });

  test("an explicit host always wins over detection", () => {
    const w = world();
    const fake = join(w.root, "docker-root");
    w.writeJson(join(fake, ".dockerenv"), "");
    expect(w.load({ containerRoot: fake, env: { SVC_HOST: "127.0.0.1" } }).config.host).toBe("127.0.0.1");
    w.writeJson(join(w.cwd, "svc.config.json"), { host: "127.0.0.2" });
    expect(w.load({ containerRoot: fake }).config.host).toBe("127.0.0.2");
    expect(w.load({ containerRoot: fake, flags: { host: "::1" } }).config.host).toBe("::1");
  });
});

describe("bad values stop start-up with the key and its source", () => {
  test("a port that is not a number", () => {
    const error = configError(() => world().load({ env: { SVC_PORT: "abc" } }));
    expect(error.message).toBe('invalid port from environment (SVC_PORT): expected an integer (got "abc")');
  });

  test("a port out of range in a file", () => {
    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), { port: 70000 });
    const error = configError(() => w.load());
    expect(error.message).toContain("invalid port from ./svc.config.json");
    expect(error.message).toContain("70000");
  });

  test("an unknown permission mode", () => {
    const error = configError(() => world().load({ env: { SVC_PERMISSION_MODE: "yolo" } }));
    expect(error.message).toContain("permissionMode");
    expect(error.message).toContain("SVC_PERMISSION_MODE");
    expect(error.message).toContain('"yolo"');
  });

  test("an unparseable file", () => {
    const w = world();
    w.writeJson(join(w.home, ".svc", "config.json"), "{ port: 9100, }");
    const error = configError(() => w.load());
    expect(error.message).toStartWith("cannot read config file ~/.svc/config.json:");
  });

  test("a file that is not an object", () => {
    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), "[1,2]");
    expect(configError(() => w.load()).message).toBe("config file ./svc.config.json must hold a JSON object");
  });

  test("a --config file that does not exist", () => {
    expect(configError(() => world().load({ configPath: "nope.json" })).message).toBe(
      "config file not found: nope.json (from --config)",
    );
  });

  test("a nested key names its full path", () => {
    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), { memoryBridge: { reaperIntervalMs: "often" } });
    expect(configError(() => w.load()).message).toContain(
      "invalid memoryBridge.reaperIntervalMs from ./svc.config.json",
    );
  });

  test("a boolean variable with another word", () => {
    const error = configError(() => world().load({ env: { SVC_DASHBOARD_ENABLED: "maybe" } }));
    expect(error.message).toContain("SVC_DASHBOARD_ENABLED");
  });

  test("a hard cap shorter than the grace period", () => {
    const error = configError(() =>
      world().load({ env: { SVC_SHUTDOWN_GRACE_MS: "5000", SVC_SHUTDOWN_HARD_MS: "1000" } }),
    );
    expect(error.message).toContain("shutdownHardMs");
  });

  test("secrets are never echoed back", () => {
    const error = configError(() =>
      world().load({ env: { SVC_WEBHOOKS: '[{"url":"ftp://x","secret":"hunter2"}]' } }),
    );
    expect(error.message).not.toContain("hunter2");
    expect(error.message).toContain("webhooks.0.url");
  });

  test("an event filter naming an event the catalog lacks: the key, the bad name and its kin", () => {
    const webhook = configError(() =>
      world().load({
        env: {
          SVC_WEBHOOKS: JSON.stringify([
            { url: "https://hooks.test/a?token=hunter2", events: ["session.created", "status.stalled"] },
          ]),
        },
      }),
    );
    expect(webhook.message).toStartWith(
      'invalid webhooks.0.events.1 from environment (SVC_WEBHOOKS): unknown event "status.stalled" (known status.* events: status.idle,',
    );
    expect(webhook.message).toContain("status.stall,");
    expect(webhook.message).not.toContain("hunter2");

    const teamchat = configError(() =>
      world().load({ env: { SVC_TEAMCHAT_EVENTS: '["status.stall", "stall"]' } }),
    );
    expect(teamchat.message).toBe(
      'invalid teamchatEvents.1 from environment (SVC_TEAMCHAT_EVENTS): unknown event "stall" (known events: session.*, permission.*, consensus.*, verification, message.*, status.*, budget.*, swarm.*; see docs/events.md)',
    );

    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), { emailEvents: ["status.*"] });
    expect(configError(() => w.load()).message).toStartWith(
      'invalid emailEvents.0 from ./svc.config.json: unknown event "status.*" (a filter lists names, patterns are not supported; known status.* events:',
    );
  });

  test("event filters that name the catalog's events load as they are", () => {
    const { config } = world().load({
      env: {
        SVC_WEBHOOKS: JSON.stringify([{ url: "https://hooks.test/a", events: ["permission.requested"] }]),
        SVC_TEAMCHAT_EVENTS: '["status.stall", "verification"]',
        SVC_EMAIL_EVENTS: '["status.dead"]',
      },
    });
    expect(config.webhooks[0]!.events).toEqual(["permission.requested"]);
    expect(config.teamchatEvents).toEqual(["status.stall", "verification"]);
    expect(config.emailEvents).toEqual(["status.dead"]);
  });

  test("an unknown key is a warning, not a failure", () => {
    const w = world();
    w.writeJson(join(w.cwd, "svc.config.json"), { prot: 1 });
    expect(w.load().warnings).toEqual(['unknown key "prot" in ./svc.config.json (ignored)']);
  });
});
