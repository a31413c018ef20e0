/**
 * The mock model's script: reply specs, rules and the built-in rules (a port of the agent
 * harness's mock-anthropic.mjs, same JSON shapes, so its scenario files work unchanged).
 */

export interface ToolCall {
  name: string;
  input?: Record<string, unknown>;
}

export interface MockError {
  status?: number;
  type?: string;
  message?: string;
  retry_after?: number;
  should_retry?: boolean;
}

/** One answer. Numbers may be template strings ("{{1|10}}"), filled before use. */
export interface MockReply {
  text?: string;
  thinking?: string;
  tool?: ToolCall;
  /** Parallel tool calls. */
  tools?: ToolCall[];
  /** Raw content blocks, used as they are. */
  blocks?: Record<string, unknown>[];
  /** Used instead when a tool of this reply is not offered in the request. */
  fallback?: MockReply;
  delay_s?: number | string;
  delay_ms?: number | string;
  stream_s?: number | string;
  stream_ms?: number | string;
  chunk_chars?: number;
  chunk_ms?: number;
  error?: MockError;
  /** Text first, then an SSE `error` event instead of the end of the message. */
  stream_error?: { type?: string; message?: string };
  hang?: boolean;
  usage?: Record<string, number>;
  stop_reason?: string;
}

/**
 * Matched (case-insensitively) against the last human prompt: `match` is a substring, `regex`
 * fills `{{1}}`…, `any` matches everything. `steps[i]` answers after i tool rounds, so one rule
 * scripts a whole turn; `times` lets it fire N turns, then fall through.
 */
export interface MockRule {
  name?: string;
  match?: string;
  regex?: string;
  any?: boolean;
  reply?: MockReply;
  steps?: MockReply[];
  times?: number;
}

export interface MockScenario {
  rules?: MockRule[];
  /** For requests without tools (session titles, summaries). */
  side_rules?: MockRule[];
  /** false turns the built-in rules off. */
  builtins?: boolean;
  defaults?: { chunk_chars?: number; chunk_ms?: number; usage?: Record<string, number> };
  /** Replaces the default "Mock reply to: …" answer. */
  fallback?: MockReply;
}

const SLOW_TEXT =
  "This reply is streamed slowly, word by word, so that the working state of the client can be observed for a while. ";

export const BUILTIN_RULES: readonly MockRule[] = [
  { name: "hello", match: "say hello", reply: { text: "Hello from the mock model! 👋" } },
  {
    name: "think",
    match: "think",
    reply: {
      thinking: "The user wants me to think. Let me consider it carefully… 2 + 2 = 4.",
      text: "After thinking: the answer is 4.",
    },
  },
  {
    name: "run ls",
    match: "run ls",
    steps: [
      {
        text: "I'll list the files.",
        tool: { name: "Bash", input: { command: "ls", description: "List files in current directory" } },
      },
      { text: "Listed the directory. Output:\n\n{{tool_result}}" },
    ],
  },
  {
    name: "run cmd",
    regex: "run cmd:\\s*(.+)$",
    steps: [
      { tool: { name: "Bash", input: { command: "{{1}}", description: "Run the requested command" } } },
      { text: "Command finished:\n\n{{tool_result}}" },
    ],
  },
  {
    name: "edit file",
    match: "edit file",
    steps: [
      {
        text: "I'll create the file.",
        tool: { name: "Write", input: { file_path: "{{cwd}}/hello.txt", content: "hello from the mock\n" } },
      },
      { text: "Wrote hello.txt." },
    ],
  },
  {
    name: "change file",
    match: "change file",
    steps: [
      { tool: { name: "Read", input: { file_path: "{{cwd}}/hello.txt" } } },
      {
        tool: {
          name: "Edit",
          input: { file_path: "{{cwd}}/hello.txt", old_string: "hello", new_string: "goodbye" },
        },
      },
      { text: "Changed hello.txt." },
    ],
  },
  {
    name: "ask me",
    match: "ask me",
    steps: [
      {
        tool: {
          name: "AskUserQuestion",
          input: {
            questions: [
              {
                question: "Which color should the button be?",
                header: "Color",
                multiSelect: false,
                options: [
                  { label: "Red", description: "A bold red button" },
                  { label: "Blue", description: "A calm blue button" },
                ],
              },
            ],
          },
        },
        fallback: { text: "I would ask you a question, but the AskUserQuestion tool is not available." },
      },
      { text: "Thanks for answering: {{tool_result}}" },
    ],
  },
  {
    // In plan mode Claude Code names the plan file in a system reminder ({{plan_file}}).
    name: "plan",
    match: "make a plan",
    steps: [
      {
        text: "Writing the plan.",
        tool: {
          name: "Write",
          input: {
            file_path: "{{plan_file|/tmp/mock-plan.md}}",
            content: "# Plan\n\n1. Create hello.txt\n2. Say hello\n",
          },
        },
      },
      { tool: { name: "ExitPlanMode", input: {} } },
      { text: "Plan answer: {{tool_result}}" },
    ],
  },
  {
    name: "slow",
    regex: "\\bslow(?:\\s+(\\d+))?",
    reply: { stream_s: "{{1|10}}", text: SLOW_TEXT.repeat(4) },
  },
  { name: "hang", match: "hang forever", reply: { hang: true } },
  {
    name: "rate limit",
    match: "rate limit",
    reply: {
      error: {
        status: 429,
        type: "rate_limit_error",
        message: "Number of request tokens has exceeded your per-minute rate limit (mock)",
        retry_after: 1,
      },
    },
  },
  {
    name: "overloaded",
    match: "overloaded",
    reply: { error: { status: 529, type: "overloaded_error", message: "Overloaded (mock)" } },
  },
  {
    name: "server error",
    match: "server error",
    reply: { error: { status: 500, type: "api_error", message: "Internal server error (mock)" } },
  },
  {
    name: "bad request",
    match: "bad request",
    reply: { error: { status: 400, type: "invalid_request_error", message: "Invalid request (mock)" } },
  },
  {
    name: "stream error",
    match: "stream error",
    reply: {
      text: "Starting to answer and then",
      stream_error: { type: "overloaded_error", message: "Overloaded (mock, mid-stream)" },
    },
  },
  {
    name: "long",
    match: "long answer",
    reply: { text: Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n") },
  },
];

export const DEFAULT_REPLY: MockReply = {
  text: "Mock reply to: {{prompt_first_line}} ({{prompt_chars}} chars, {{prompt_lines}} lines)",
};

/** After the last step of a rule (or any tool round without a rule). */
export const DEFAULT_FINAL: MockReply = {
  text: "Done ({{round}} tool round(s)). Last tool result:\n{{tool_result}}",
};
