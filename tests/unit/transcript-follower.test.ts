import { expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClaudeAdapter } from "../../src/agents/claude/adapter.ts";
import { createTranscriptFollower } from "../../src/sessions/live/follower.ts";
import { createLogger } from "../../src/shared/log.ts";
import { tempDir } from "../helpers/temp.ts";

const agent = createClaudeAdapter({
  home: tempDir("ag-home-"),
  dataDir: null,
  trustWorkdir: false,
  selfCommand: ["ag"],
  isRoot: false,
});
const lines = readFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean);

test("settled with a prompt waits for that prompt's turn, not the ended one before it", async () => {
  const path = join(tempDir("ag-transcript-"), "t.jsonl");
  // The first turn ("say hello") is written and ended; the second ("think about it") not yet.
  writeFileSync(path, `${lines.slice(0, 10).join("\n")}\n`);
  const follower = createTranscriptFollower({
    agent,
    logger: createLogger({ level: "silent", json: false }),
    onLine: () => {},
  });
  await follower.attach(path, true);
  let settled = false;
  const waiting = follower
    .settled(5_000, (last) => last === "think about it")
    .then(() => {
      settled = true;
    });
  await Bun.sleep(200);
  expect(settled).toBe(false);
  appendFileSync(path, `${lines.slice(10, 18).join("\n")}\n`);
  await waiting;
  expect(follower.summary().lastUserMessage).toBe("think about it");
  expect(follower.output()).toContain("4");
  // Without a prompt to wait for, the ended turn is settled at once.
  await follower.settled(5_000);
  follower.stop();
});
