import {
  BUILTIN_RULES,
  DEFAULT_FINAL,
  DEFAULT_REPLY,
  type MockReply,
  type MockRule,
  type MockScenario,
} from "./rules.ts";

/** The parts of a Messages API request body the mock reads. */
export interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  messages?: Array<{ role?: string; content?: unknown }>;
  tools?: Array<{ name?: string }>;
}

/** What a request asks: main-loop requests carry the tool list, side requests do not. */
export interface RequestInfo {
  kind: "main" | "side";
  /** The last human prompt, in full. */
  prompt: string;
  /** Every human prompt of the request, oldest first. */
  history: string[];
  /**
   * Tool rounds since that prompt, not counting the rounds that only loaded deferred tools
   * (ToolSearch): a rule's steps are the same whether or not the agent defers its tools.
   */
  round: number;
  lastToolResult: string;
  cwd: string;
  toolNames: string[];
  system: string;
  planFile: string;
}

/** The mutable part of the mock's script; one per server. */
export interface ScriptState {
  scenario: MockScenario;
  runtimeRules: MockRule[];
  queue: MockReply[];
  /** Turns each rule has answered (for `times`). */
  used: Map<MockRule, number>;
  /** The rule that answered the current turn, so its later steps follow whatever `times` says. */
  turn: { prompt: string; rule: MockRule; groups: string[] } | null;
}

type Block = { type?: string; text?: string; content?: unknown };

/** The tool through which Claude Code (2.1.328) loads the tools it defers. */
const TOOL_SEARCH = "ToolSearch";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[])
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "")
    .join("\n");
}

/**
 * The human text of a user message: its last text block without the `<system-reminder>` and
 * "[Request interrupted by user]" text Claude Code injects (after an API error or an interrupt
 * it merges consecutive prompts into one message, one block each).
 */
function humanText(content: unknown): string {
  const blocks: Block[] =
    typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
  const texts = blocks
    .filter((b) => b.type === "text")
    .map((b) =>
      (b.text ?? "")
        .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "")
        .replace(/^\[Request interrupted by user[^\]\n]*\]$/gm, "")
        .trim(),
    )
    .filter(Boolean);
  return texts.at(-1) ?? "";
}

/** The names of the tools an assistant message calls. */
function calledTools(message: { content?: unknown } | undefined): string[] {
  const blocks = Array.isArray(message?.content) ? (message.content as Array<Block & { name?: string }>) : [];
  return blocks.filter((b) => b.type === "tool_use").map((b) => b.name ?? "");
}

/** Walks back from the end, counting tool rounds until the last message with human text. */
export function analyse(body: MessagesBody): RequestInfo {
  const messages = body.messages ?? [];
  let round = 0;
  let lastToolResult = "";
  let prompt = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    const results = (Array.isArray(message.content) ? (message.content as Block[]) : []).filter(
      (b) => b.type === "tool_result",
    );
    const called = calledTools(messages[i - 1]);
    // A round that only loaded deferred tools: its result (and the "Tool loaded." text beside it)
    // is neither a step of the rule nor a prompt.
    if (results.length && called.length > 0 && called.every((name) => name === TOOL_SEARCH)) continue;
    const text = humanText(message.content);
    if (results.length && !round) lastToolResult = results.map((r) => textOf(r.content)).join("\n");
    if (text) {
      prompt = text;
      break;
    }
    if (results.length) round++;
  }
  const system = textOf(body.system);
  const toolNames = (body.tools ?? []).map((t) => t.name ?? "");
  // Every human prompt the request carries, oldest first: the conversation the model was given.
  const history = messages
    .filter((m) => m.role === "user")
    .map((m) => humanText(m.content))
    .filter(Boolean);
  return {
    history,
    kind: toolNames.length ? "main" : "side",
    prompt,
    round,
    lastToolResult,
    cwd: workingDirectory(system, messages) ?? process.cwd(),
    toolNames,
    system,
    planFile: JSON.stringify(messages).match(/(\/[^\s"\\]*\/plans\/[\w.-]+\.md)/)?.[1] ?? "",
  };
}

/**
 * The agent's working directory as its environment block states it ("Primary working directory:
 * /x"): in the system prompt (Claude Code 2.1.197), or in a message of the conversation (2.1.328
 * moved the block into a `system` turn ahead of the first prompt).
 */
function workingDirectory(system: string, messages: NonNullable<MessagesBody["messages"]>): string | null {
  const stated = /working directory:\s*(\S+)/i;
  const found = system.match(stated)?.[1];
  if (found) return found;
  for (const message of messages) {
    const hit = textOf(message.content).match(stated)?.[1];
    if (hit) return hit;
  }
  return null;
}

/** Fills `{{name}}` / `{{name|default}}` in every string of a reply. */
export function fill<T>(value: T, vars: Record<string, string | number | undefined>): T {
  if (typeof value === "string") {
    return value.replace(/\{\{(\w+)(?:\|([^}]*))?\}\}/g, (_, key: string, fallback?: string) => {
      const v = vars[key];
      return v === undefined || v === "" ? (fallback ?? "") : String(v);
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, vars)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)])) as T;
  }
  return value;
}

function matchRule(rules: readonly MockRule[], text: string, used: Map<MockRule, number>) {
  for (const rule of rules) {
    if (rule.times !== undefined && (used.get(rule) ?? 0) >= rule.times) continue;
    let groups: string[] | null = null;
    if (rule.regex) groups = new RegExp(rule.regex, "i").exec(text)?.map((g) => g ?? "") ?? null;
    else if (rule.match !== undefined)
      groups = text.toLowerCase().includes(rule.match.toLowerCase()) ? [text] : null;
    else if (rule.any) groups = [text];
    if (groups) return { rule, groups };
  }
  return null;
}

export interface Choice {
  reply: MockReply;
  /** The rule's name, "queued", "default", "side-default". */
  name: string;
}

export function choose(state: ScriptState, body: MessagesBody, info: RequestInfo): Choice {
  const vars: Record<string, string | number | undefined> = {
    prompt: info.prompt,
    prompt_first_line: info.prompt.split("\n")[0]!.slice(0, 60),
    prompt_chars: info.prompt.length,
    prompt_lines: info.prompt ? info.prompt.split("\n").length : 0,
    cwd: info.cwd,
    round: info.round,
    tool_result: info.lastToolResult.slice(0, 2000),
    model: body.model,
    plan_file: info.planFile,
  };
  if (info.kind === "side") return chooseSide(state, info, vars);
  const queued = state.queue.shift();
  if (queued) return { reply: fill(queued, vars), name: "queued" };

  const { scenario } = state;
  const rules = [
    ...state.runtimeRules,
    ...(scenario.rules ?? []),
    ...(scenario.builtins === false ? [] : BUILTIN_RULES),
  ];
  let hit: { rule: MockRule; groups: string[] } | null = null;
  if (info.round === 0) {
    hit = matchRule(rules, info.prompt, state.used);
    if (hit) state.used.set(hit.rule, (state.used.get(hit.rule) ?? 0) + 1);
    state.turn = hit ? { prompt: info.prompt, ...hit } : null;
  } else if (state.turn?.prompt === info.prompt) {
    hit = state.turn;
  } else {
    hit = matchRule(rules, info.prompt, new Map());
  }
  if (!hit)
    return {
      reply: fill(info.round ? DEFAULT_FINAL : (scenario.fallback ?? DEFAULT_REPLY), vars),
      name: "default",
    };

  const { rule, groups } = hit;
  groups.forEach((g, i) => {
    if (i) vars[i] = g;
  });
  const step = rule.steps ? rule.steps[info.round] : info.round === 0 ? rule.reply : undefined;
  let reply = fill(step ?? DEFAULT_FINAL, vars);
  const tools = reply.tools ?? (reply.tool ? [reply.tool] : []);
  const missing = tools.filter((t) => !info.toolNames.includes(t.name)).map((t) => t.name);
  // Deferred tools (Claude Code 2.1.328 defers ExitPlanMode, WebFetch, …): a model first loads
  // them with ToolSearch, then calls them in the next round.
  if (missing.length && info.toolNames.includes(TOOL_SEARCH))
    return {
      reply: { tool: { name: TOOL_SEARCH, input: { query: `select:${missing.join(",")}`, max_results: 5 } } },
      name: rule.name ?? rule.match ?? rule.regex ?? "any",
    };
  if (missing.length)
    reply = reply.fallback ?? { text: `(mock) tool(s) ${missing.join(", ")} not offered in this request` };
  return { reply, name: rule.name ?? rule.match ?? rule.regex ?? "any" };
}

/** Requests without tools: title generation, summaries, quota probes. */
function chooseSide(
  state: ScriptState,
  info: RequestInfo,
  vars: Record<string, string | number | undefined>,
): Choice {
  const hit = matchRule(state.scenario.side_rules ?? [], `${info.system}\n${info.prompt}`, state.used);
  if (hit) {
    state.used.set(hit.rule, (state.used.get(hit.rule) ?? 0) + 1);
    return { reply: fill(hit.rule.reply ?? {}, vars), name: hit.rule.name ?? "side" };
  }
  // An automatic approval reviewer (Codex's auto mode) wants a verdict: the mock allows.
  if (/\{"outcome":\s*"allow"\}/.test(`${info.system}\n${info.prompt}`))
    return { reply: { text: JSON.stringify({ outcome: "allow" }) }, name: "approval-review" };
  const system = info.system.toLowerCase();
  // The conversation to name: Claude Code wraps it in <session>, Codex puts it after "User prompt:".
  const topic =
    info.prompt.match(/<session>\s*([\s\S]*?)\s*<\/session>/)?.[1] ??
    info.prompt.match(/\nUser prompt:\n([\s\S]*)$/)?.[1] ??
    info.prompt;
  const title = `Mock: ${topic.split(/\s+/).slice(0, 5).join(" ")}`.slice(0, 60);
  if (/title/.test(system))
    return { reply: { text: /json/.test(system) ? JSON.stringify({ title }) : title }, name: "side-default" };
  return { reply: { text: "OK" }, name: "side-default" };
}
