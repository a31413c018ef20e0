import { expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { ag, insert, serve } from "../helpers/cli.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * `ag search`, and a hit picked up by `ag read`, as a person runs them: `bun src/main.ts` against
 * the served app, whose session has a captured Claude Code transcript, indexed.
 */
test("ag search prints hits with snippets; ag read <hit> shows the message, ag open <hit> links to it; bad input exits 1 with its code", async () => {
  const { ag: app, port } = serve();
  const transcript = join(tempDir(), "conversation.jsonl");
  copyFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), transcript);
  const session = insert(app, { name: "greeter", status: "idle", transcriptPath: transcript });
  await app.search.index(session.id);

  const found = await ag(["search", "say", "hello", "--role", "prompt", "--port", port]);
  expect(found.exitCode).toBe(0);
  const [head, snippet] = found.stdout.split("\n");
  expect(head).toMatch(new RegExp(`^${session.id}#\\d+  claude · prompt · .* · greeter · `));
  expect(snippet).toBe("  say hello");
  expect(found.stderr).toContain("1 hit in");

  const json = await ag(["search", "hello", "--json", "--limit", "3", "--port", port]);
  const hits = JSON.parse(json.stdout).hits as Array<{ hit: string; role: string; messageId: number }>;
  expect(hits.length).toBeGreaterThan(1);
  const prompt = hits.find((h) => h.role === "prompt")!;

  const read = await ag(["read", prompt.hit, "--port", port]);
  expect(read.exitCode).toBe(0);
  expect(read.stdout).toContain(`▶ message ${prompt.messageId}`);
  expect(read.stdout).toContain("say hello");
  // ag open <hit>: the session's page at that message.
  const open = await ag(["open", prompt.hit, "--port", port]);
  expect(open.exitCode).toBe(0);
  expect(open.stdout).toBe(
    `http://127.0.0.1:${port}/dashboard/#/sessions/${session.id}?at=${prompt.messageId}\n`,
  );

  const none = await ag(["search", "nothingmatchesthis", "--port", port]);
  expect([none.exitCode, none.stdout]).toEqual([0, "no match\n"]);
  const bad = await ag(["search", '"unclosed', "--port", port]);
  expect([bad.exitCode, bad.stderr]).toEqual([1, expect.stringContaining("[SEARCH_QUERY_INVALID]")]);
  const empty = await ag(["search", "--port", port]);
  expect([empty.exitCode, empty.stderr]).toEqual([1, expect.stringContaining("[USAGE_ERROR]")]);
}, 60_000);
