import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ag, cliEnv } from "../helpers/cli.ts";
import { gitRepository } from "../helpers/git.ts";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The checkpoint routes and verbs through ag's real runtime (SQLite file, HTTP on port 0), on a
 * headless session of the fake ACP agent (tests/fakes/acp-agent.ts, run by the Gemini adapter's
 * ACP entry): a turn's checkpoint, a rewind refused while the agent works and where the agent
 * cannot rewind a conversation, every bad input a 4xx envelope, `ag diff` and `ag rewind`.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const home = tempDir("ag-cp-home-");
const workDir = gitRepository(tempDir("ag-cp-work-"));
const fakeState = tempDir("ag-cp-fake-");

type Runtime = Awaited<ReturnType<typeof startTestRuntime>>;
let rt: Runtime;
let id: string;
const api = (method: string, path: string, body?: unknown) => callApi<Json>(rt, method, path, body);
const port = () => new URL(rt.url).port;
const cli = (...args: string[]) => ag([...args, "--port", port()], home, cliEnv({ stateDir: rt.stateDir }));

async function reach(status: string): Promise<Json> {
  let last: Json = {};
  await until(async () => {
    last = (await api("GET", `/v1/sessions/${id}`)).body;
    return last.status === status;
  }, 15_000);
  return last;
}

beforeAll(async () => {
  rt = await startTestRuntime({}, { home });
}, 30_000);
afterAll(async () => {
  await rt.drain(100);
  rt.close();
});

describe("a session's checkpoints over the API and the CLI", () => {
  test("a rewind is refused while the agent waits on a permission; the turn's checkpoint once it ends", async () => {
    const created = await api("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir,
      agentCommand: [process.execPath, FAKE, "--state", fakeState].join(" "),
      prompt: "write file made.txt",
      reuse: false,
    });
    expect(created.status).toBe(201);
    id = created.body.id;
    const waiting = await reach("permission_prompt");
    const busy = await api("POST", `/v1/sessions/${id}/rewind`, { turn: 0 });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: "SESSION_BUSY", statusCode: 409 });
    const listed = await api("GET", `/v1/sessions/${id}/checkpoints`);
    expect(listed.body.checkpoints).toMatchObject([
      { turn: 1, prompt: "write file made.txt", endedAt: null },
    ]);

    await api("POST", `/v1/sessions/${id}/approve`, { permissionId: waiting.pendingPermission.id });
    await reach("idle");
    let list: Json = {};
    await until(async () => {
      list = (await api("GET", `/v1/sessions/${id}/checkpoints`)).body;
      return list.checkpoints[0]?.endedAt !== null;
    }, 15_000);
    expect(list).toMatchObject({
      sessionId: id,
      folder: workDir,
      shadow: false,
      undo: null,
      checkpoints: [{ turn: 1, files: [{ path: "made.txt", status: "added", added: 1, removed: 0 }] }],
    });
  }, 30_000);

  test("bad input is a 4xx envelope, never a 500", async () => {
    const cases: Array<[string, string, unknown, number, string]> = [
      ["POST", `/v1/sessions/${id}/rewind`, { turn: -1 }, 400, "VALIDATION_ERROR"],
      ["POST", `/v1/sessions/${id}/rewind`, { turn: 1, what: "files" }, 400, "VALIDATION_ERROR"],
      ["POST", `/v1/sessions/${id}/rewind`, { turn: 1, undo: true }, 400, "VALIDATION_ERROR"],
      ["POST", `/v1/sessions/${id}/rewind`, { undo: false }, 400, "VALIDATION_ERROR"],
      ["POST", `/v1/sessions/${id}/rewind`, { turn: 9 }, 404, "CHECKPOINT_NOT_FOUND"],
      ["POST", `/v1/sessions/${id}/rewind`, { undo: true }, 404, "CHECKPOINT_NOT_FOUND"],
      ["POST", `/v1/sessions/${id}/rewind`, { turn: 0, what: "conversation" }, 400, "VALIDATION_ERROR"],
      ["POST", `/v1/sessions/${id}/rewind`, { turn: 1, what: "both" }, 400, "UNSUPPORTED_BY_AGENT"],
      ["POST", "/v1/sessions/nope/rewind", { turn: 1 }, 404, "SESSION_NOT_FOUND"],
      ["GET", `/v1/sessions/${id}/checkpoints/x/diff`, undefined, 400, "VALIDATION_ERROR"],
      ["GET", `/v1/sessions/${id}/checkpoints/1.5/diff`, undefined, 400, "VALIDATION_ERROR"],
      ["GET", `/v1/sessions/${id}/checkpoints/0/diff`, undefined, 404, "CHECKPOINT_NOT_FOUND"],
      ["GET", `/v1/sessions/${id}/checkpoints/7/diff`, undefined, 404, "CHECKPOINT_NOT_FOUND"],
      ["GET", "/v1/sessions/nope/checkpoints", undefined, 404, "SESSION_NOT_FOUND"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const answer = await api(method, path, body);
      expect({ path, body, status: answer.status, code: answer.body.code }).toEqual({
        path,
        body,
        status,
        code,
      });
      expect(answer.body.statusCode).toBe(status);
    }
    // "both" refused for the conversation left the folder as it was.
    expect(existsSync(join(workDir, "made.txt"))).toBe(true);
  }, 30_000);

  test("ag diff lists the turns and prints a turn's diff; ag rewind rewinds and undoes", async () => {
    const listed = await cli("diff", id);
    expect(listed.stderr).toBe("");
    expect(listed.stdout).toMatch(/TURN\s+FILES[\s\S]*\n1\s+made\.txt\s+1\s+0\s+write file made\.txt/);
    const diff = await cli("diff", id, "1");
    expect(diff.stdout).toContain("+++ b/made.txt");
    const rewound = await cli("rewind", id, "0");
    expect(rewound.stdout).toContain("rewound the folder to turn 0: 1 file(s) written or removed");
    expect(existsSync(join(workDir, "made.txt"))).toBe(false);
    const undone = await cli("rewind", id, "--undo");
    expect(undone.stdout).toContain("undid the rewind to turn 0");
    expect(readFileSync(join(workDir, "made.txt"), "utf8")).toBe("written by the fake agent\n");
    const refused = await cli("rewind", id);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("[USAGE_ERROR]");
  }, 30_000);
});
