import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_SECRET_HEADER } from "../../src/agents/vocabulary.ts";
import { ag } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp.ts";

/** `ag hook`, the forwarder of command hooks, as an agent runs it: payload on stdin, decision on stdout. */
const received: Array<{ path: string; secret: string | null; body: unknown }> = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const path = new URL(request.url).pathname;
    received.push({ path, secret: request.headers.get(HOOK_SECRET_HEADER), body: await request.json() });
    if (path.endsWith("/BeforeTool")) return Response.json({ decision: "deny", reason: "not here" });
    if (path.endsWith("/Broken")) return new Response("oops", { status: 500 });
    return Response.json({});
  },
});
afterAll(() => server.stop(true));

const secretFile = join(tempDir(), "secret");
writeFileSync(secretFile, "s3cret\n");
const hook = (event: string, payload: unknown) =>
  ag(
    [
      "hook",
      event,
      "--url",
      `http://127.0.0.1:${server.port}/v1/hooks/gemini/${event}`,
      "--secret-file",
      secretFile,
    ],
    undefined,
    undefined,
    JSON.stringify(payload),
  );

describe("ag hook", () => {
  test("forwards the payload with the secret and prints ag's refusal for the agent", async () => {
    const run = await hook("BeforeTool", { tool_name: "run_shell_command" });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ decision: "deny", reason: "not here" });
    expect(received.at(-1)).toEqual({
      path: "/v1/hooks/gemini/BeforeTool",
      secret: "s3cret",
      body: { tool_name: "run_shell_command" },
    });
  });

  test("no decision, a failing ag or none at all: nothing printed, exit 0", async () => {
    for (const event of ["AfterAgent", "Broken"]) {
      const run = await hook(event, { prompt: "x" });
      expect([run.exitCode, run.stdout]).toEqual([0, ""]);
    }
    const away = await ag(
      [
        "hook",
        "AfterAgent",
        "--url",
        "http://127.0.0.1:1/v1/hooks/gemini/AfterAgent",
        "--secret-file",
        secretFile,
      ],
      undefined,
      undefined,
      "{}",
    );
    expect([away.exitCode, away.stdout]).toEqual([0, ""]);
  });
});
