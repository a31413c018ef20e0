import { describe, expect, test } from "bun:test";
import { modelOf, protocolUsage } from "../../src/drivers/acp/usage.ts";

describe("what ACP itself says of tokens and models", () => {
  test("a prompt response's `usage`: thought tokens are output, cache reads and writes their own", () => {
    const response = {
      stopReason: "end_turn",
      usage: {
        inputTokens: 26,
        outputTokens: 8,
        thoughtTokens: 3,
        cachedReadTokens: 7565,
        cachedWriteTokens: 12,
        totalTokens: 7614,
      },
    };
    expect(protocolUsage(response, "mock/claude-sonnet-4-5")).toEqual({
      model: "mock/claude-sonnet-4-5",
      tokens: { input: 26, output: 11, cacheRead: 7565, cacheCreation: 12 },
    });
  });

  test("no usage, or only zeros (OpenCode's cancelled turn): nothing to count", () => {
    expect(protocolUsage({ stopReason: "end_turn" }, null)).toBeNull();
    expect(protocolUsage({ stopReason: "end_turn", usage: null }, null)).toBeNull();
    const cancelled = { stopReason: "cancelled", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } };
    expect(protocolUsage(cancelled, "m")).toBeNull();
  });

  test("the model is the current value of the config option of category model", () => {
    const select = (id: string, category: string, currentValue: string) => ({
      id,
      name: id,
      category,
      type: "select" as const,
      currentValue,
      options: [{ value: currentValue, name: currentValue }],
    });
    expect(
      modelOf([select("mode", "mode", "build"), select("model", "model", "mock/claude-haiku-4-5")]),
    ).toBe("mock/claude-haiku-4-5");
    expect(modelOf([select("mode", "mode", "build")])).toBeNull();
    expect(modelOf(undefined)).toBeNull();
  });
});
