import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type LoadOptions, loadConfig } from "../../src/config/index.ts";
import { configError } from "../helpers/config.ts";
import { tempDir } from "../helpers/temp.ts";

/** A machine with no config files, no environment and no container; the project is `cwd`. */
function world() {
  const root = tempDir("ag-config-yaml-");
  const home = join(root, "home");
  const cwd = join(root, "project");
  const notContainer = join(root, "rootfs");
  for (const d of [home, cwd, notContainer]) mkdirSync(d, { recursive: true });
  const load = (options: LoadOptions = {}) =>
    loadConfig({ env: {}, home, cwd, containerRoot: notContainer, ...options });
  const write = (path: string, text: string, mode = 0o644) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };
  const yaml = (text: string) => write(join(cwd, ".svc", "config.yaml"), text);
  const tokenFile = (token: string, mode = 0o600) => write(join(home, ".svc", "auth-token"), token, mode);
  return { home, cwd, load, write, yaml, tokenFile };
}

describe("the project file .svc/config.yaml", () => {
  test("its values are read and labelled", () => {
    const w = world();
    w.yaml("# a comment\nport: 9300\npermissionMode: plan\nmemoryBridge:\n  enabled: false\n");
    const { config, sources, warnings } = w.load();
    expect(config.port).toBe(9300);
    expect(config.permissionMode).toBe("plan");
    expect(config.memoryBridge).toEqual({ enabled: false, persistPath: null, reaperIntervalMs: 3_600_000 });
    expect(sources.port).toBe("./.svc/config.yaml");
    expect(warnings).toEqual([]);
  });

  test("sits above ~/.svc/config.json and below ./svc.config.json", () => {
    const w = world();
    w.write(join(w.home, ".svc", "config.json"), JSON.stringify({ port: 9201, logLevel: "debug" }));
    w.yaml("port: 9202\nstallThresholdMs: 5000\n");
    w.write(join(w.cwd, "svc.config.json"), JSON.stringify({ stallThresholdMs: 7000 }));
    const { config, sources } = w.load();
    expect(config.port).toBe(9202);
    expect(config.logLevel).toBe("debug");
    expect(config.stallThresholdMs).toBe(7000);
    expect(sources.stallThresholdMs).toBe("./svc.config.json");
    expect(w.load({ env: { SVC_PORT: "9203" } }).config.port).toBe(9203);
  });

  test("a --config file named .yaml or .yml is YAML", () => {
    const w = world();
    w.write(join(w.cwd, "ag.yml"), "port: 9310\n");
    const { config, sources } = w.load({ configPath: "ag.yml" });
    expect(config.port).toBe(9310);
    expect(sources.port).toBe("--config ag.yml");
  });

  test("a file of comments only changes nothing", () => {
    const w = world();
    w.yaml("# port: 1234\n\n# host: 0.0.0.0\n");
    const { config, warnings } = w.load();
    expect(config.port).toBe(9100);
    expect(warnings).toEqual([]);
  });

  test("unknown keys are warned about, clientAuthToken is not", () => {
    const w = world();
    w.yaml("prot: 9100\nclientAuthToken: s3cret\n");
    expect(w.load().warnings).toEqual(['unknown key "prot" in ./.svc/config.yaml (ignored)']);
  });

  test("a bad value names the key and the file, and never echoes a secret", () => {
    const w = world();
    w.yaml("permissionMode: yolo\n");
    expect(configError(() => w.load()).message).toContain("permissionMode from ./.svc/config.yaml");
    w.yaml("authToken: 42\n");
    const secret = configError(() => w.load()).message;
    expect(secret).toContain("authToken from ./.svc/config.yaml");
    expect(secret).not.toContain("42");
    w.yaml("clientAuthToken: [a, b]\n");
    expect(configError(() => w.load()).message).toContain("clientAuthToken from ./.svc/config.yaml");
  });

  test("broken YAML and a document that is not a mapping are refused", () => {
    const w = world();
    w.yaml("port: [9100\n");
    expect(configError(() => w.load()).message).toContain("cannot read config file ./.svc/config.yaml");
    w.yaml("- port\n- host\n");
    expect(configError(() => w.load()).message).toBe(
      "config file ./.svc/config.yaml must hold a YAML mapping",
    );
  });
});

describe("the auth token", () => {
  test("comes from <stateDir>/auth-token when nothing sets it", () => {
    const w = world();
    const path = w.tokenFile("file-token\n");
    const { config, sources, warnings } = w.load();
    expect(config.authToken).toBe("file-token");
    expect(sources.authToken).toBe(path);
    expect(warnings).toEqual([]);
  });

  test("the token file follows a configured state directory", () => {
    const w = world();
    const stateDir = join(w.home, "elsewhere");
    w.write(join(stateDir, "auth-token"), "moved-token", 0o600);
    expect(w.load({ env: { SVC_STATE_DIR: stateDir } }).config.authToken).toBe("moved-token");
  });

  test("SVC_AUTH_TOKEN and an authToken key beat the file; an empty variable does not", () => {
    const w = world();
    w.tokenFile("file-token");
    expect(w.load({ env: { SVC_AUTH_TOKEN: "env-token" } }).config.authToken).toBe("env-token");
    expect(w.load({ env: { SVC_AUTH_TOKEN: "" } }).config.authToken).toBe("file-token");
    w.write(join(w.cwd, "svc.config.json"), JSON.stringify({ authToken: "" }));
    expect(w.load().config.authToken).toBe("");
  });

  test("a token file others may read is used, with a warning", () => {
    const w = world();
    w.tokenFile("file-token", 0o644);
    const { config, warnings } = w.load();
    expect(config.authToken).toBe("file-token");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("chmod 600");
  });

  test("an empty token file counts as none", () => {
    const w = world();
    w.tokenFile("\n");
    expect(w.load().config.authToken).toBe("");
  });

  test("a not yet migrated clientAuthToken is the fallback; the token file beats it", () => {
    const w = world();
    w.yaml("clientAuthToken: legacy-token\n");
    const legacy = w.load();
    expect(legacy.config.authToken).toBe("legacy-token");
    expect(legacy.sources.authToken).toContain("ag auth migrate");
    w.tokenFile("file-token");
    expect(w.load().config.authToken).toBe("file-token");
  });
});
