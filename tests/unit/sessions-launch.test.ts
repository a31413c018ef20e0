import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testApp } from "../helpers/app.ts";
import { idleSession, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** A launch that fails is a transition of its own: recorded, told, and nothing left followed. */
describe("launches that fail", () => {
  test("no window: 503, the session crashed with its events, not followed, not counted", async () => {
    const app = testApp({ maxSessions: 1 });
    app.tmux.newWindow = async () => {
      throw new Error("no server");
    };
    const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
    expect(response.status).toBe(503);
    expect(((await response.json()) as Json).code).toBe("TMUX_UNAVAILABLE");
    const [record] = app.repo.list();
    expect(record).toMatchObject({ status: "crashed", endReason: "launch failed: no server" });
    expect(app.events.map((e) => e.event)).toEqual(["status.dead", "session.ended"]);
    await Bun.sleep(0);
    expect(app.live.get(record!.id)).toBeUndefined();
  });

  test("no launch files: 503, the session crashed, not followed", async () => {
    const app = testApp();
    // The session's private files cannot be written: <stateDir>/sessions is a file.
    writeFileSync(join(app.stateDir, "sessions"), "not a directory");
    const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
    expect(response.status).toBe(503);
    expect(((await response.json()) as Json).code).toBe("AGENT_UNAVAILABLE");
    const [record] = app.repo.list();
    expect(record!.status).toBe("crashed");
    await Bun.sleep(0);
    expect(app.live.get(record!.id)).toBeUndefined();
  });

  test("a resume whose window cannot open: still ended as it was, not followed", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id } = await idleSession(app);
    const transcript = join(tempDir(), `${id}.jsonl`);
    mkdirSync(join(transcript, ".."), { recursive: true });
    await Bun.write(
      transcript,
      `${JSON.stringify({ type: "user", message: { role: "user", content: "hi" } })}\n`,
    );
    app.repo.update(id, { transcriptPath: transcript });
    await app.request("DELETE", `/v1/sessions/${id}`);
    app.tmux.newWindow = async () => {
      throw new Error("no server");
    };
    const resumed = await app.request("POST", `/v1/sessions/${id}/resume`);
    expect(resumed.status).toBe(503);
    expect(app.repo.get(id)!.status).toBe("killed");
    expect(app.live.get(id)).toBeUndefined();
  });
});
