import type { PendingPermission } from "../sessions/index.ts";
import { clip } from "../shared/errors.ts";

/** What a handoff brief is made of, read from the session handed off. */
export interface BriefParts {
  from: { id: string; name: string; agent: string; workDir: string };
  /** Why: manual, rate_limit, usage_limit, budget. */
  trigger: string;
  /** The person's note to the next agent, if any. */
  note: string | null;
  /** The task as first asked: the session's first prompt. */
  task: string | null;
  /** Every prompt after the first, in order (the digest names each by its first line). */
  laterPrompts: string[];
  turns: number;
  toolCallsByName: Record<string, number>;
  /** The last turns whole: each entry with its role. */
  lastTurns: Array<{ role: string; kind: string; text: string }>;
  /** Files changed since the session began, and how they were found. */
  changes: { source: string; files: string[]; stat: string | null };
  pending: PendingPermission | null;
}

/** The brief is a prompt: it stays well under a prompt's 256 KiB. */
const TASK_CHARS = 8_000;
const ENTRY_CHARS = 2_000;
const LAST_TURNS_CHARS = 16_000;
const FILES_LISTED = 200;
const PROMPT_LINE_CHARS = 200;

/**
 * The first prompt of the new session: the task as first asked, a digest of the conversation,
 * the last turns whole, the files changed, what was left waiting — and the note. Pure.
 */
export function composeBrief(parts: BriefParts): string {
  const sections = [
    `You are taking over a task from another coding agent (${parts.from.agent}, session ${parts.from.name}) in this same folder (${parts.from.workDir}); ${reasonOf(parts.trigger)}. Continue the task from where it stopped. Check the current state of the files before changing anything.`,
    parts.note ? `## Note from the person handing it over\n${parts.note}` : null,
    `## The task, as first asked\n${parts.task ? clip(parts.task, TASK_CHARS) : "(no prompt was recorded)"}`,
    `## Digest of the conversation\n${digest(parts)}`,
    `## Files changed since the session began (${parts.changes.source})\n${changedFiles(parts.changes)}`,
    `## The last turns, whole\n${lastTurns(parts.lastTurns)}`,
    parts.pending ? `## Left waiting\n${pendingLine(parts.pending)}` : null,
  ];
  return typeable(sections.filter((s): s is string => s !== null).join("\n\n"));
}

/** A prompt takes newlines and tabs only: any other control character a transcript held becomes a space. */
function typeable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  return text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ");
}

function reasonOf(trigger: string): string {
  switch (trigger) {
    case "rate_limit":
      return "it was handed over because its model provider kept answering with rate limits";
    case "usage_limit":
      return "it was handed over because it reached its provider's usage limit";
    case "budget":
      return "it was handed over because it reached its spending budget";
    default:
      return "a person handed it over";
  }
}

function digest(parts: BriefParts): string {
  const tools = Object.entries(parts.toolCallsByName)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ×${n}`)
    .join(", ");
  const lines = [`${parts.turns} turn(s); tools used: ${tools || "none"}.`];
  if (parts.laterPrompts.length > 0) {
    lines.push("Later prompts, in order:");
    for (const prompt of parts.laterPrompts) lines.push(`- ${firstLine(prompt)}`);
  }
  return lines.join("\n");
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return clip(line, PROMPT_LINE_CHARS);
}

function changedFiles(changes: BriefParts["changes"]): string {
  if (changes.files.length === 0) return "(none found)";
  const listed = changes.files.slice(0, FILES_LISTED).map((f) => `- ${f}`);
  if (changes.files.length > FILES_LISTED) listed.push(`- … and ${changes.files.length - FILES_LISTED} more`);
  return changes.stat ? `${listed.join("\n")}\n\n${changes.stat.trim()}` : listed.join("\n");
}

/** The newest entries that fit, oldest first: whole turns from the end. */
function lastTurns(entries: BriefParts["lastTurns"]): string {
  const kept: string[] = [];
  let size = 0;
  for (const entry of [...entries].reverse()) {
    const text = `[${entry.role}${entry.kind === "text" ? "" : ` ${entry.kind}`}] ${clip(entry.text, ENTRY_CHARS)}`;
    if (size + text.length > LAST_TURNS_CHARS && kept.length > 0) break;
    kept.unshift(text);
    size += text.length;
  }
  return kept.length ? kept.join("\n") : "(no turns were recorded)";
}

function pendingLine(pending: PendingPermission): string {
  const what = pending.question ?? pending.detail;
  const options = pending.options?.map((o) => `${o.index}. ${o.label}`).join("; ");
  const kind =
    pending.kind === "question" ? "a question" : `a ${pending.kind} permission (${pending.tool ?? ""})`;
  return `The previous agent was waiting on ${kind}: ${clip(what, ENTRY_CHARS)}${options ? ` — options: ${options}` : ""}`;
}
