/**
 * The mock model API the real Claude Code CLI talks to in tests (port of the agent harness's
 * mock-anthropic.mjs). Built-in rules, by prompt: "say hello", "think", "run ls", "run cmd: <cmd>",
 * "edit file", "change file", "ask me", "make a plan", "slow [N]", "hang forever", "rate limit",
 * "overloaded", "server error", "bad request", "stream error", "long answer"; anything else gets
 * "Mock reply to: <first line> (<chars> chars, <lines> lines)".
 */

export type { MockReply, MockRule, MockScenario, ToolCall } from "./mock-model/rules.ts";
export { BUILTIN_RULES } from "./mock-model/rules.ts";
export type { MockModel, MockModelOptions, MockRequest } from "./mock-model/server.ts";
export { startMockModel } from "./mock-model/server.ts";
