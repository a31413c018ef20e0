import type { TranscriptLineMeaning, TranscriptReader } from "../agent.ts";
import { createTranscriptState, parseTranscriptLine, type TranscriptEntry } from "./transcript.ts";

const clip = (text: string, max = 2000) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * Claude Code's transcript lines, as state evidence and as `message.*` events. Only a person's
 * prompt is evidence of state (the agent's own record that a prompt was accepted); interrupt
 * markers are not, because they can be read after a newer prompt already started the next turn.
 */
export function createClaudeTranscriptReader(): TranscriptReader {
  const state = createTranscriptState();
  return {
    add(line) {
      const entry = parseTranscriptLine(line);
      if (!entry) return { messages: [] };
      state.add(entry);
      return meaning(entry);
    },
    output: () => state.snapshot().turn.output,
    turnEnded: () => state.snapshot().turn.ended,
    tokens: () => {
      const t = state.snapshot().tokens;
      return { input: t.input, output: t.output, cacheRead: t.cacheRead, cacheCreation: t.cacheCreation };
    },
  };
}

function meaning(entry: TranscriptEntry): TranscriptLineMeaning {
  const meta = { uuid: entry.uuid, timestamp: entry.timestamp, sidechain: entry.sidechain };
  switch (entry.kind) {
    case "prompt":
      return {
        observation: entry.sidechain
          ? { kind: "activity", working: false }
          : {
              kind: "prompt-submitted",
              text: entry.text,
              promptId: entry.promptId ?? undefined,
            },
        messages: [{ event: "message.user", detail: clip(entry.text), meta }],
      };
    case "assistant":
      return {
        observation: { kind: "activity", working: false },
        messages: entry.blocks.flatMap((block): TranscriptLineMeaning["messages"] => {
          if (block.type === "text") return [{ event: "message.assistant", detail: clip(block.text), meta }];
          if (block.type === "thinking")
            return [{ event: "message.thinking", detail: clip(block.text), meta }];
          if (block.type === "tool_use") {
            return [
              {
                event: "message.tool_use",
                detail: block.name,
                meta: { ...meta, tool: block.name, input: block.input },
              },
            ];
          }
          return [];
        }),
      };
    case "tool_result":
      return {
        observation: { kind: "activity", working: false },
        messages: entry.results.map((r) => ({
          event: "message.tool_result",
          detail: clip(r.text),
          meta: { ...meta, toolUseId: r.toolUseId, isError: r.isError },
        })),
      };
    default:
      return { observation: { kind: "activity", working: false }, messages: [] };
  }
}
