import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { conversationMessages, openCodeHistory } from "../../src/agents/opencode/history.ts";
import { toTurn } from "../../src/search/indexer.ts";
import { writeOpenCodeStore } from "../helpers/agents/opencode.ts";
import { tempDir } from "../helpers/temp.ts";

const SAY_HELLO = "ses_dd9390a2fffegcsKNM4wP1VpRn";
const RUN_LS = "ses_dd938f31bffeW2dTCRO9jBz0ee";

const home = tempDir("ag-opencode-history-");
const db = writeOpenCodeStore(home);

describe("OpenCode's own history (its SQLite store, captured from 1.18.33)", () => {
  test("each main conversation: its id, folder and a stamp of its last change", async () => {
    const found = await openCodeHistory(db);
    expect(found.map((c) => [c.conversationId, c.workDir, c.path])).toEqual([
      [RUN_LS, "/w/app", db],
      [SAY_HELLO, "/w/app", db],
    ]);
    expect(found[1]!.stored?.stamp).toBe(1795946906260);
  });

  test("a conversation's parts as the cursor pages them: prompt, answer, tool call and result", () => {
    const messages = conversationMessages(db, RUN_LS);
    expect(messages.map((m) => [m.id, m.role, m.kind, m.toolName ?? null])).toEqual([
      [1, "user", "prompt", null],
      [2, "assistant", "text", null],
      [3, "assistant", "tool_use", "bash"],
      [4, "user", "tool_result", "bash"],
      [5, "assistant", "text", null],
    ]);
    expect(messages[0]!.text).toBe('"run ls"');
    expect(messages[2]!.toolInput).toEqual({ command: "ls" });
    expect(messages[3]!.text).toContain("README.md");
    expect(messages[4]!.timestamp).toBe(new Date(1795946914076).toISOString());
    // Indexed as search's turn parts: the tool call by its name and input.
    expect(toTurn(messages[2]!)).toMatchObject({ role: "tool", text: 'bash {"command":"ls"}' });
  });

  test("read only: the database is neither written nor touched", async () => {
    const before = statSync(db);
    await openCodeHistory(db);
    conversationMessages(db, SAY_HELLO);
    const after = statSync(db);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
  });

  test("no store is no history", async () => {
    expect(await openCodeHistory(`${home}/nowhere/opencode.db`)).toEqual([]);
  });
});
