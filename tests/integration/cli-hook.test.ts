import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_SECRET_HEADER } from "../../src/agents/vocabulary.ts";
import { ag } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * `ag hook`, the forwarder an agent runs as a command hook: the payload from stdin to ag with the
 * session's secret, and ag's answer on stdout when it decides something.
 */
const seen: Array<{ path: string; secret: string | null; body: unknown }> = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const path = new URL(request.url).pathname;
    seen.push({ path, secret: request.headers.get(HOOK_SECRET_HEADER), body: await request.json() });
    if (path.endsWith("/PreToolUse"))
      return Response.json({ hookSpecificOutput: { permissionDecision: "deny" } });
    if (path.endsWith("/Broken")) return new Response("oops", { status: 500 });
    return Response.json({});
  },
});
afterAll(() => server.stop(true));

const secretFile = join(tempDir(), "secret");
writeFileSync(secretFile, "s3cret\n");
const forward = (event: string, payload: unknown) =>
  ag(
    [
      "hook",
      event,
      "--url",
      `http://127.0.0.1:${server.port}/v1/hooks/codex/${event}`,
      "--secret-file",
      secretFile,
    ],
    undefined,
    undefined,
    JSON.stringify(payload),
  );

describe("ag hook", () => {
  test("forwards the payload with the secret; a decision is printed, no decision prints nothing", async () => {
    const denied = await forward("PreToolUse", { tool_name: "Bash" });
    expect(denied.exitCode).toBe(0);
    expect(JSON.parse(denied.stdout)).toEqual({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(seen.at(-1)).toEqual({
      path: "/v1/hooks/codex/PreToolUse",
      secret: "s3cret",
      body: { tool_name: "Bash" },
    });
    const plain = await forward("UserPromptSubmit", { prompt: "hi" });
    expect([plain.exitCode, plain.stdout]).toEqual([0, ""]);
  });

  test("never fails the agent: an error answer or no server at all exit 0 in silence", async () => {
    const broken = await forward("Broken", {});
    expect([broken.exitCode, broken.stdout, broken.stderr]).toEqual([0, "", ""]);
    const nobody = await ag(
      ["hook", "Stop", "--url", "http://127.0.0.1:9/v1/hooks/codex/Stop", "--secret-file", secretFile],
      undefined,
      undefined,
      "{}",
    );
    expect([nobody.exitCode, nobody.stdout]).toEqual([0, ""]);
  });
});
