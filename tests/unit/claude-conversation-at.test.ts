import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { conversationAt } from "../../src/agents/claude/rewind.ts";
import { tempDir } from "../helpers/temp.ts";

/** A Claude Code transcript of three turns: prompts, replies, a tool round, a sub-agent's prompt. */
function transcript(dir: string): string {
  const line = (uuid: string, parentUuid: string | null, fields: Record<string, unknown>) =>
    JSON.stringify({ uuid, parentUuid, sessionId: "old", ...fields });
  const prompt = (uuid: string, parent: string | null, text: string, extra = {}) =>
    line(uuid, parent, { type: "user", message: { role: "user", content: text }, ...extra });
  const reply = (uuid: string, parent: string, text: string) =>
    line(uuid, parent, {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "text", text }] },
    });
  const lines = [
    JSON.stringify({ type: "permission-mode", permissionMode: "default", sessionId: "old" }),
    prompt("p1", null, "edit file"),
    reply("a1", "p1", "I'll create the file."),
    line("r1", "a1", {
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
      toolUseResult: {},
    }),
    reply("a1b", "r1", "Wrote hello.txt."),
    prompt("p2", "a1b", "change file"),
    prompt("s2", "p2", "a sub-agent's task", { isSidechain: true }),
    reply("a2", "p2", "Changed hello.txt."),
    prompt("p3", "a2", "run cmd: echo made > shell.txt"),
    reply("a3", "p3", "Command finished."),
  ];
  const path = join(dir, "old.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

test("Claude Code's conversation as turn 2 left it: the lines before the third prompt, each the copy's", async () => {
  const dir = tempDir();
  const copy = await conversationAt(transcript(dir), 2, "new-id");
  expect(copy).toBe(join(dir, "new-id.jsonl"));
  const lines = readFileSync(copy, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines.map((l) => l.uuid ?? l.type)).toEqual([
    "permission-mode",
    "p1",
    "a1",
    "r1",
    "a1b",
    "p2",
    "s2",
    "a2",
  ]);
  expect(new Set(lines.map((l) => l.sessionId))).toEqual(new Set(["new-id"]));
});

test("turn 1 keeps its tool round; more turns than the conversation has is CHECKPOINT_NOT_FOUND", async () => {
  const dir = tempDir();
  const path = transcript(dir);
  const one = readFileSync(await conversationAt(path, 1, "one"), "utf8");
  expect(one).toContain("Wrote hello.txt.");
  expect(one).not.toContain("change file");
  const refused = await conversationAt(path, 4, "four").then(
    () => null,
    (error: { code?: string }) => error.code,
  );
  expect(refused).toBe("CHECKPOINT_NOT_FOUND");
});
