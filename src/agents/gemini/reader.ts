import type { AgentObservation, TranscriptLineMeaning, TranscriptReader } from "../agent.ts";
import { emptySummary, summaryOf } from "../agent.ts";
import { clip } from "../clip.ts";
import { toolResultMessage, toolUseMessage } from "../messages.ts";
import { createTurnLedger, type TurnPlace } from "../turn-ledger.ts";
import { createUsageTally } from "../usage.ts";
import type { TokenCounts } from "../vocabulary.ts";
import { partsText, resultsOf } from "./parts.ts";
import {
  createMessageFilter,
  factsOf,
  type GeminiMessage,
  type GeminiTokens,
  parseSessionLine,
  type ToolCallRecord,
} from "./session-file.ts";
import { WRITING_TOOLS } from "./tools.ts";

type Events = TranscriptLineMeaning["messages"];

/**
 * The Gemini CLI's session file, in file order, as events, state evidence, `/read` and totals.
 * Each message counts once (session-file.ts): its text when first written, each tool call once
 * it has run, each tool result once. A person's prompt is evidence of state; so is an API error
 * line, the turn's end (the CLI sends no hook for it but AfterAgent, which says nothing of it).
 * `/read` and the turn's end are the latest turn's by meaning (turn-ledger.ts): each message
 * falls in the turn of the latest prompt at or before its own timestamp (when it was made, which
 * a rewrite keeps), so a reply written above its prompt, or a late rewrite of an earlier turn's
 * reply, lands in its own turn.
 */
export function createGeminiTranscriptReader(): TranscriptReader {
  const isMessage = createMessageFilter();
  const usage = createUsageTally();
  const seen = new Set<string>(); // message ids and tool call ids already told
  const files = new Set<string>();
  const facts = emptySummary();
  const ledger = createTurnLedger();

  function told(id: string): boolean {
    if (seen.has(id)) return true;
    seen.add(id);
    return false;
  }

  function prompt(message: GeminiMessage, meta: Meta): Partial<TranscriptLineMeaning> {
    const results = resultsOf(message.content);
    if (results.length) {
      ledger.mark(false, placeOf(message));
      return { messages: results.map((r) => toolResultEvent(r, meta)) };
    }
    const text = partsText(message.content);
    facts.turns++;
    ledger.begin({ id: message.id, order: placeOf(message).order, prompt: text });
    return {
      observation: { kind: "prompt-submitted", text, promptId: message.id },
      messages: [{ event: "message.user", detail: clip(text), meta }],
    };
  }

  function reply(message: GeminiMessage, meta: Meta): Events {
    const events: Events = [];
    if (message.thoughts.length && !told(`thoughts:${message.id}`)) {
      for (const thought of message.thoughts)
        events.push({ event: "message.thinking", detail: clip(thought), meta });
    }
    const text = typeof message.content === "string" ? message.content : "";
    if (text) {
      if (!told(`text:${message.id}`)) events.push({ event: "message.assistant", detail: clip(text), meta });
      ledger.text(message.id, text, placeOf(message));
      facts.lastAssistantMessage = text;
    }
    for (const call of message.toolCalls) {
      if (told(`call:${call.id}`)) continue;
      count(call);
      events.push(toolUseMessage(meta, call.name, call.id, call.args));
    }
    // A reply without tool calls ends the turn; tool calls all refused or cancelled end it too.
    const ends =
      message.toolCalls.length === 0 ? text !== "" : message.toolCalls.every((c) => c.status === "cancelled");
    ledger.mark(ends, placeOf(message));
    return events;
  }

  function count(call: ToolCallRecord): void {
    facts.toolCalls++;
    facts.toolCallsByName[call.name] = (facts.toolCallsByName[call.name] ?? 0) + 1;
    if (call.status === "error") facts.toolErrors++;
    const path = call.args.file_path;
    if (WRITING_TOOLS.has(call.name) && typeof path === "string") files.add(path);
  }

  function note(message: GeminiMessage): Partial<TranscriptLineMeaning> {
    const text = typeof message.content === "string" ? message.content : partsText(message.content);
    if (message.type === "error") {
      ledger.mark(true, placeOf(message));
      ledger.text(message.id, text, placeOf(message));
      const observation: AgentObservation = {
        kind: "turn-failed",
        error: text,
        rateLimited: isRateLimit(text),
      };
      return { observation };
    }
    if (message.type === "info" && text === "Request cancelled.") ledger.mark(true, placeOf(message));
    return {};
  }

  return {
    add(line) {
      const parsed = parseSessionLine(line);
      const entry = isMessage(factsOf(parsed));
      if (parsed.kind !== "message") return { messages: [] };
      const { message } = parsed;
      const at = message.timestamp ? Date.parse(message.timestamp) : Number.NaN;
      const meaning: TranscriptLineMeaning = {
        messages: [],
        ...(Number.isFinite(at) ? { at } : {}),
        ...usageOf(message),
      };
      // The CLI's copies of its history, and records it writes for itself: no news.
      if (!entry) return meaning;
      if (!seen.has(entry.key)) facts.messages[entry.role]++;
      facts.startedAt ??= message.timestamp;
      facts.lastEntryAt = message.timestamp ?? facts.lastEntryAt;
      const meta = { uuid: message.id, timestamp: message.timestamp, sidechain: false };
      const fresh = !told(entry.key);
      if (message.type === "user") return fresh ? { ...meaning, ...prompt(message, meta) } : meaning;
      if (message.type === "gemini")
        return { ...meaning, observation: { kind: "activity" }, messages: reply(message, meta) };
      return fresh ? { ...meaning, observation: { kind: "activity" }, ...note(message) } : meaning;
    },
    output: () => ledger.output(),
    turnEnded: () => ledger.ended(),
    tokens: () => usage.tokens(),
    tokensByModel: () => usage.tokensByModel(),
    summary: () => summaryOf({ ...facts, lastUserMessage: ledger.prompt() }, files),
  };

  function usageOf(message: GeminiMessage): Pick<TranscriptLineMeaning, "usage"> {
    if (message.type !== "gemini" || !message.tokens) return {};
    const tokens = tokenCounts(message.tokens);
    usage.add(message.id, message.model, tokens);
    return { usage: { messageId: message.id, model: message.model, tokens } };
  }
}

type Meta = { uuid: string; timestamp: string | null; sidechain: boolean };

/** A message's place among the turns: when it was made (its timestamp; a rewrite keeps it). */
function placeOf(message: GeminiMessage): TurnPlace & { order: number | null } {
  const at = message.timestamp ? Date.parse(message.timestamp) : Number.NaN;
  return { order: Number.isFinite(at) ? at : null };
}

function toolResultEvent(result: ReturnType<typeof resultsOf>[number], meta: Meta): Events[number] {
  return toolResultMessage(meta, result.id, result.text, result.isError);
}

/**
 * Gemini's counts in ag's words: its input includes the cached tokens (ag counts them apart, as
 * cache reads) and not the tool-use prompt; thoughts are billed as output.
 */
export function tokenCounts(tokens: GeminiTokens): TokenCounts {
  return {
    input: Math.max(0, tokens.input - tokens.cached) + tokens.tool,
    output: tokens.output + tokens.thoughts,
    cacheRead: tokens.cached,
    cacheCreation: 0,
  };
}

/** 429 / RESOURCE_EXHAUSTED: the quota or rate limit (the CLI retries these for minutes first). */
export function isRateLimit(error: string): boolean {
  return /\b429\b|RESOURCE_EXHAUSTED|rate limit|quota/i.test(error);
}
