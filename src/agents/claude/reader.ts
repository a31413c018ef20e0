import type { TranscriptLineMeaning, TranscriptReader } from "../agent.ts";
import { clip } from "../clip.ts";
import { toolResultMessage, toolUseMessage } from "../messages.ts";
import { readTranscriptLine, type TranscriptEntry } from "./transcript.ts";
import { createTranscriptState } from "./transcript-state.ts";

/**
 * Claude Code's transcript lines, as state evidence and as `message.*` events. Only a person's
 * prompt is evidence of state (the agent's own record that a prompt was accepted); interrupt
 * markers are not, because they can be read after a newer prompt already started the next turn.
 */
const WRITING_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

export function createClaudeTranscriptReader(): TranscriptReader {
  const state = createTranscriptState();
  const roles = { user: 0, assistant: 0, system: 0 };
  const files = new Set<string>();
  let turns = 0;
  let lastAssistant: string | null = null;
  let startedAt: string | null = null;

  function tally(entry: TranscriptEntry): void {
    roles[entry.role]++;
    startedAt ??= entry.timestamp;
    if (entry.kind === "prompt" && !entry.sidechain) turns++;
    if (entry.kind !== "assistant") return;
    for (const block of entry.blocks) {
      if (block.type === "text" && !entry.sidechain) lastAssistant = block.text;
      if (block.type === "tool_use" && WRITING_TOOLS.has(block.name)) {
        const input = block.input as { file_path?: unknown; notebook_path?: unknown } | null;
        const path = input?.file_path ?? input?.notebook_path;
        if (typeof path === "string") files.add(path);
      }
    }
  }

  return {
    add(line) {
      const read = readTranscriptLine(line);
      state.add(read?.entry ?? null, read?.link);
      const entry = read?.entry;
      if (!entry) return { messages: [] };
      tally(entry);
      const at = entry.timestamp ? Date.parse(entry.timestamp) : Number.NaN;
      const usage = usageOf(entry);
      return { ...meaning(entry), ...(Number.isFinite(at) ? { at } : {}), ...(usage ? { usage } : {}) };
    },
    output: () => state.snapshot().turn.output,
    tokensByModel: () => state.snapshot().tokensByModel,
    summary() {
      const snapshot = state.snapshot();
      const last = snapshot.lastEntryAt;
      const span = startedAt && last ? Date.parse(last) - Date.parse(startedAt) : Number.NaN;
      return {
        messages: { ...roles },
        turns,
        toolCalls: snapshot.toolCalls,
        toolCallsByName: { ...snapshot.toolCallsByName },
        toolErrors: snapshot.toolErrors,
        filesTouched: [...files],
        lastUserMessage: snapshot.lastPrompt?.text ?? null,
        lastAssistantMessage: lastAssistant,
        startedAt,
        lastEntryAt: last,
        durationMs: Number.isFinite(span) ? span : null,
      };
    },
    turnEnded: () => state.snapshot().turn.ended,
    tokens: () => {
      const t = state.snapshot().tokens;
      return { input: t.input, output: t.output, cacheRead: t.cacheRead, cacheCreation: t.cacheCreation };
    },
  };
}

/** What the line says a message used (the same messages the reader's own totals count). */
function usageOf(entry: TranscriptEntry): TranscriptLineMeaning["usage"] {
  if (entry.kind !== "assistant" || !entry.usage || !entry.messageId || entry.model === "<synthetic>")
    return undefined;
  return { messageId: entry.messageId, model: entry.model, tokens: { ...entry.usage } };
}

function meaning(entry: TranscriptEntry): TranscriptLineMeaning {
  const meta = { uuid: entry.uuid, timestamp: entry.timestamp, sidechain: entry.sidechain };
  switch (entry.kind) {
    case "prompt":
      return {
        observation: entry.sidechain
          ? { kind: "activity" }
          : entry.command
            ? // Written once the command has run (maybe after its turn's Stop): it confirms that
              // ag's typing was taken, but it is no evidence of the state now. Known by its own
              // line: it may carry the promptId of the prompt before it (seen with 2.1.197).
              { kind: "input-recorded", text: entry.text, promptId: entry.uuid ?? undefined }
            : {
                kind: "prompt-submitted",
                text: entry.text,
                promptId: entry.promptId ?? undefined,
              },
        messages: [{ event: "message.user", detail: clip(entry.text), meta }],
      };
    case "system":
      return {
        observation: entry.command
          ? { kind: "input-recorded", text: entry.command, promptId: entry.uuid ?? undefined }
          : { kind: "activity" },
        messages: [],
      };
    case "assistant":
      return {
        observation: { kind: "activity" },
        messages: entry.blocks.flatMap((block): TranscriptLineMeaning["messages"] => {
          if (block.type === "text") return [{ event: "message.assistant", detail: clip(block.text), meta }];
          if (block.type === "thinking")
            return [{ event: "message.thinking", detail: clip(block.text), meta }];
          if (block.type === "tool_use") {
            return [toolUseMessage(meta, block.name, block.id, block.input)];
          }
          return [];
        }),
      };
    case "tool_result":
      return {
        observation: { kind: "activity" },
        messages: entry.results.map((r) => toolResultMessage(meta, r.toolUseId, r.text, r.isError)),
      };
    default:
      return { observation: { kind: "activity" }, messages: [] };
  }
}
