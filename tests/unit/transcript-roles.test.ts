import { describe, expect, test } from "bun:test";
import { claudeTranscriptFormat } from "../../src/agents/claude/transcript.ts";
import { opencodeConversationFormat } from "../../src/agents/opencode/conversation.ts";

const bytes = (line: unknown) => new TextEncoder().encode(JSON.stringify(line));

describe("message lines by the role a top-level field names", () => {
  test("Claude Code: `type` is the role; bookkeeping types and nested fields are not", () => {
    const classify = claudeTranscriptFormat.classify;
    expect(classify(bytes({ type: "user", message: { role: "user" } }))).toBe("user");
    expect(classify(bytes({ type: "assistant" }))).toBe("assistant");
    expect(classify(bytes({ type: "system", subtype: "x" }))).toBe("system");
    expect(classify(bytes({ type: "summary" }))).toBeNull();
    expect(classify(bytes({ data: { type: "user" } }))).toBeNull();
  });

  test("OpenCode: `role` is the role; session and usage lines have none", () => {
    const classify = opencodeConversationFormat.classify;
    expect(classify(bytes({ id: "a", role: "assistant", kind: "text" }))).toBe("assistant");
    expect(classify(bytes({ id: "b", type: "usage", tokens: {} }))).toBeNull();
    expect(classify(bytes({ id: "c", role: "users" }))).toBeNull();
  });
});
