import { type AgEvent, pendingPermissionOf } from "../../events/bus.ts";
import type { EventName } from "../../events/names.ts";
import type { InlineKeyboard } from "./api.ts";
import { encodeAnswer, encodeBudgetButton } from "./callback.ts";

/**
 * Pure: events → chat messages (the API's HTML parse mode, where only `&`, `<` and `>` need
 * escaping in text). SPEC's verbose rules: thinking is shown (cut to 800 characters) only in
 * verbose mode; a tool use is shown with its label and a code block cut to 600 characters in
 * verbose mode, and otherwise only as progress — one line naming the tools used
 * ("🔧 Bash · Read ×2"). User and assistant messages are always shown.
 */

export const THINKING_LIMIT = 800;
export const TOOL_CODE_LIMIT = 600;
/** The API refuses a text over 4096 characters after parsing; the HTML is never shorter. */
export const MAX_MESSAGE_CHARS = 4000;
/** One message, status detail or plan inside a chat message, so that one event always fits. */
const TEXT_LIMIT = 3000;
const PROMPT_LIMIT = 1000;
/** The API's limit for a forum topic's name. */
const TOPIC_NAME_LIMIT = 128;

export interface ChatText {
  /** HTML parse mode. */
  html: string;
  keyboard?: InlineKeyboard;
}

export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * At most `limit` UTF-16 units — what the bot API counts (an emoji is two) — cut between code
 * points, so no emoji is split; "…" marks a cut.
 */
export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let kept = "";
  for (const char of text) {
    if (kept.length + char.length > limit - 1) break;
    kept += char;
  }
  return `${kept}…`;
}

export function topicName(sessionName: string): string {
  return truncate(sessionName.trim() || "session", TOPIC_NAME_LIMIT);
}

export const isMessageEvent = (event: AgEvent) => event.event.startsWith("message.");

/** Does the chat show this event at all (with these verbose settings)? */
export function isForwarded(event: AgEvent, verbose: boolean): boolean {
  if (!event.session) return false;
  switch (event.event) {
    case "session.created":
    case "session.ended":
    case "consensus.completed":
    case "message.user":
    case "message.assistant":
    case "message.tool_use":
    case "budget.warning":
    case "budget.reached":
    case "budget.raised":
    case "session.handoff":
      return true;
    case "message.thinking":
    case "message.tool_result":
      return verbose;
    default:
      return event.event.startsWith("status.");
  }
}

const STATUS: Partial<Record<EventName, { icon: string; label: string; detail: boolean }>> = {
  "status.working": { icon: "⚙️", label: "working", detail: false },
  "status.idle": { icon: "💤", label: "idle, waiting for a prompt", detail: false },
  "status.recovered": { icon: "🔄", label: "recovered", detail: false },
  "status.question": { icon: "❓", label: "question", detail: true },
  "status.stall": { icon: "⏳", label: "stalled", detail: true },
  "status.dead": { icon: "💀", label: "dead", detail: true },
  "status.stopped": { icon: "⏹️", label: "stopped", detail: true },
  "status.error": { icon: "⚠️", label: "error", detail: true },
  "status.rate_limited": { icon: "🚦", label: "rate limited", detail: true },
  "status.permission_timeout": { icon: "⏰", label: "prompt unanswered", detail: true },
  "budget.warning": { icon: "💸", label: "budget warning", detail: true },
  "budget.raised": { icon: "💵", label: "budget raised", detail: true },
  "session.handoff": { icon: "🤝", label: "handed off", detail: true },
};

/** A link of ours (the dashboard's), in an attribute too: quotes escaped as well. */
function linkLine(link: string): string {
  const href = escapeHtml(link).replaceAll('"', "&quot;");
  return `\n🔗 <a href="${href}">${escapeHtml(link)}</a>`;
}

/**
 * A lifecycle or status event: one message of its own (a permission prompt with buttons). An
 * event that needs a human ends with the session's dashboard link (CONTRACT §10), shown as the
 * URL itself so it can be copied where the client does not open it (a dashboard on localhost).
 */
export function formatStatus(event: AgEvent, link: string | null = null): ChatText {
  const text = formatStatusText(event);
  return link === null ? text : { ...text, html: `${text.html}${linkLine(link)}` };
}

function formatStatusText(event: AgEvent): ChatText {
  const session = event.session!;
  if (event.event === "session.created") {
    return {
      html: `🆕 <b>${escapeHtml(session.name)}</b> started\n📁 <code>${escapeHtml(session.workDir)}</code>\n🆔 <code>${escapeHtml(session.id)}</code>`,
    };
  }
  if (event.event === "session.ended") {
    const reason = event.meta.reason || event.detail;
    return { html: `🏁 <b>ended</b> (${escapeHtml(truncate(reason, TEXT_LIMIT))})` };
  }
  if (event.event === "consensus.completed") {
    const verdict = event.meta.verdict ? event.meta.verdict.toUpperCase() : "no verdict";
    return {
      html: `🧑‍⚖️ <b>Review: ${escapeHtml(verdict)}</b>\n${escapeHtml(truncate(event.detail, TEXT_LIMIT))}`,
    };
  }
  if (event.event === "status.permission" || event.event === "status.plan") return formatPrompt(event);
  if (event.event === "status.question") return formatQuestion(event);
  if (event.event === "budget.reached") return formatBudgetReached(event);
  const known = STATUS[event.event];
  const head = known ? `${known.icon} <b>${known.label}</b>` : `ℹ️ <b>${escapeHtml(event.event)}</b>`;
  const showDetail = (known?.detail ?? true) && event.detail.trim() !== "";
  return { html: showDetail ? `${head}\n${escapeHtml(truncate(event.detail, TEXT_LIMIT))}` : head };
}

function formatPrompt(event: AgEvent): ChatText {
  const pending = pendingPermissionOf(event);
  const plan = event.event === "status.plan";
  const what = pending?.detail ?? event.detail;
  const head = plan
    ? "📋 <b>Plan to approve</b>"
    : `🔐 <b>Permission: ${escapeHtml(pending?.tool ?? pending?.kind ?? "tool")}</b>`;
  const html = `${head}\n<pre>${escapeHtml(truncate(what, plan ? TEXT_LIMIT : PROMPT_LIMIT))}</pre>`;
  if (!pending) return { html };
  const approve = encodeAnswer("approve", event.session!.id, pending.id, pending);
  const reject = encodeAnswer("reject", event.session!.id, pending.id, pending);
  if (!approve || !reject) return { html };
  return {
    html,
    keyboard: {
      inline_keyboard: [
        [
          { text: "✅ Approve", callback_data: approve },
          { text: "❌ Reject", callback_data: reject },
        ],
      ],
    },
  };
}

/**
 * A budget reached: what it says, and two buttons — raise the budget that paused the session by
 * its own cap again (at least $1), or stop here (it stays paused, its held prompt dropped).
 */
function formatBudgetReached(event: AgEvent<"budget.reached">): ChatText {
  const html = `🛑 <b>budget reached</b>\n${escapeHtml(truncate(event.detail, TEXT_LIMIT))}`;
  const cents = raiseCents(event.meta.usd);
  const sessionId = event.session!.id;
  const raise = encodeBudgetButton({ action: "raise", sessionId, cents });
  const stop = encodeBudgetButton({ action: "stop", sessionId });
  if (!raise || !stop) return { html };
  return {
    html,
    keyboard: {
      inline_keyboard: [
        [
          { text: `➕ Raise by $${(cents / 100).toFixed(2)}`, callback_data: raise },
          { text: "⏹️ Stop here", callback_data: stop },
        ],
      ],
    },
  };
}

/** How much "raise" adds: the budget's cap again (doubling it), at least one dollar. */
export function raiseCents(cap: number | null): number {
  return Math.max(100, Math.ceil((cap ?? 0) * 100));
}

/** A question: its text, a button per option, and one to dismiss it (replies answer it too). */
function formatQuestion(event: AgEvent): ChatText {
  const pending = pendingPermissionOf(event);
  const question = pending?.question ?? pending?.detail ?? event.detail;
  const options = pending?.options ?? [];
  const lines = options.map((o) => `${o.index}. ${escapeHtml(o.label)}`);
  const html = [`❓ <b>Question</b>\n${escapeHtml(truncate(question, TEXT_LIMIT))}`, ...lines].join("\n");
  if (!pending) return { html };
  const buttons = options.map((o) => ({
    text: truncate(`${o.index}. ${o.label}`, 60),
    callback_data: encodeAnswer(o.index, event.session!.id, pending.id, pending),
  }));
  const dismiss = encodeAnswer("reject", event.session!.id, pending.id, pending);
  if (!dismiss || buttons.some((b) => b.callback_data === null)) return { html };
  return {
    html,
    keyboard: {
      inline_keyboard: [
        ...buttons.map((b) => [b as { text: string; callback_data: string }]),
        [{ text: "❌ Dismiss", callback_data: dismiss }],
      ],
    },
  };
}

/** Consecutive message.* events of one session as one chat message, in their order. */
export function formatBatch(events: AgEvent[], verbose: boolean): string {
  const parts: string[] = [];
  let tools: string[] = [];
  const flushTools = () => {
    if (tools.length > 0) parts.push(`🔧 ${progressLine(tools)}`);
    tools = [];
  };
  for (const event of events) {
    if (event.event === "message.tool_use" && !verbose) {
      tools.push(toolName(event));
      continue;
    }
    flushTools();
    const part = formatMessage(event, verbose);
    if (part) parts.push(part);
  }
  flushTools();
  return parts.join("\n\n");
}

function formatMessage(event: AgEvent, verbose: boolean): string | null {
  switch (event.event) {
    case "message.user":
      return `👤 ${escapeHtml(truncate(event.detail, TEXT_LIMIT))}`;
    case "message.assistant":
      return `🤖 ${escapeHtml(truncate(event.detail, TEXT_LIMIT))}`;
    case "message.thinking":
      return verbose ? `💭 <i>${escapeHtml(truncate(event.detail, THINKING_LIMIT))}</i>` : null;
    case "message.tool_use":
      return formatToolUse(event);
    case "message.tool_result": {
      if (!verbose) return null;
      const icon = event.meta.isError === true ? "❗" : "📎";
      return `${icon} <pre>${escapeHtml(truncate(event.detail, TOOL_CODE_LIMIT))}</pre>`;
    }
    default:
      return null;
  }
}

/** Verbose: the tool's label (name, and its own description if any) and what it runs. */
function formatToolUse(event: AgEvent<"message.tool_use">): string {
  const input = (event.meta.input ?? {}) as Record<string, unknown>;
  const description =
    typeof input.description === "string" ? ` — ${escapeHtml(truncate(input.description, 200))}` : "";
  const [language, code] =
    typeof input.command === "string"
      ? ["bash", input.command]
      : ["json", JSON.stringify(input, null, 2) ?? ""];
  return `🔧 <b>${escapeHtml(toolName(event))}</b>${description}\n<pre><code class="language-${language}">${escapeHtml(truncate(code, TOOL_CODE_LIMIT))}</code></pre>`;
}

function toolName(event: AgEvent<"message.tool_use">): string {
  return event.meta.tool || event.detail || "tool";
}

/** "Bash · Read ×2 · Bash": repeats in a row are counted, the order is kept. */
function progressLine(tools: string[]): string {
  const runs: Array<{ name: string; count: number }> = [];
  for (const name of tools) {
    const last = runs.at(-1);
    if (last?.name === name) last.count++;
    else runs.push({ name, count: 1 });
  }
  return runs.map((r) => `${escapeHtml(r.name)}${r.count > 1 ? ` ×${r.count}` : ""}`).join(" · ");
}
