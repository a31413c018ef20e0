import { describe, expect, test } from "bun:test";
import { createAdmission, DEFAULT_AGENT_BYTES } from "../../src/host/index.ts";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

const MB = 1024 * 1024;

describe("admission by memory", () => {
  test("one more agent must fit above the reserve; before any was measured, the default is expected", async () => {
    let available = 2000 * MB;
    let running: Array<{ agent: string; rssBytes: number }> = [];
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => available,
      running: async () => running,
    });
    expect(admission.expected("claude")).toBe(DEFAULT_AGENT_BYTES);
    await admission.check("claude"); // 2000 - 512 ≥ 1000
    available = 1400 * MB;
    const refused = await admission.check("claude").catch((e) => e);
    expect(refused).toMatchObject({ code: "HOST_MEMORY_LOW", retryAfterSeconds: 30 });
    expect(refused.message).toContain("1400 MB available");
    expect(refused.message).toContain("1000 MB are kept free");
    // Measured agents teach what one more takes: small codex agents fit where the default did not.
    running = [{ agent: "codex", rssBytes: 200 * MB }];
    await admission.check("codex");
    expect(admission.expected("codex")).toBe(200 * MB);
    running = [{ agent: "codex", rssBytes: 300 * MB }];
    await admission.check("codex");
    expect(admission.expected("codex")).toBe(230 * MB); // a weighted mean moves 30 % toward a new measure
  });

  test("reserve 0 turns it off; without /proc nothing is refused", async () => {
    const off = createAdmission({ reserveMb: 0, available: async () => 0, running: async () => [] });
    await off.check("claude");
    const blind = createAdmission({ reserveMb: 1000, available: async () => null, running: async () => [] });
    await blind.check("claude");
  });

  test("a refused create is 503 HOST_MEMORY_LOW with Retry-After, and nothing starts", async () => {
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => 100 * MB,
      running: async () => [],
    });
    const app = testApp({ admission: (agent) => admission.check(agent) });
    simulateAgents(app);
    const response = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "hello" },
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("30");
    expect(((await response.json()) as { code: string }).code).toBe("HOST_MEMORY_LOW");
    expect(app.repo.list()).toEqual([]);
    expect(app.tmux.server.windows.size).toBe(0);
  });
});
