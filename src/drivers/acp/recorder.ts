import { appendFileSync } from "node:fs";
import type * as acp from "@agentclientprotocol/sdk";
import type { AcpEntry } from "./entries.ts";

/**
 * What an ACP agent streams, written down as the entries of ag's transcript of the session
 * (entries.ts), appended. Streamed text, and what the agent says of a tool call before it runs,
 * are kept until the next kind of update comes and then written as one entry: reply chunks make
 * one reply, and a call announced before its input was streamed (claude-code-acp sends its
 * `tool_call` twice: with `rawInput: {}`, then with the input) is written once, with the input.
 */

/** A tool call as an update or a permission request describes it (ACP fields, all but the id optional). */
export interface ToolCallSeen {
  toolCallId: string;
  title?: string | null;
  kind?: string | null;
  rawInput?: unknown;
}

export interface Recorder {
  readonly path: string;
  write(entry: AcpEntry): void;
  text(type: "assistant" | "thinking", block: acp.ContentBlock): void;
  /** A tool call seen (announced, updated, or asking permission); true the first time. */
  tool(call: ToolCallSeen): boolean;
  /** The call's kind as the agent last named it ("other" when it never did). */
  kindOf(toolCallId: string): string;
  toolResult(update: acp.ToolCallUpdate): void;
  plan(entries: acp.PlanEntry[]): void;
  /** Writes what is kept. */
  flush(): void;
}

type Kept = { type: "assistant" | "thinking"; text: string } | { type: "tool"; call: ToolCallSeen };

const now = () => new Date().toISOString();
const hasInput = (input: unknown) =>
  input !== undefined && input !== null && !(typeof input === "object" && Object.keys(input).length === 0);

function resultText(update: acp.ToolCallUpdate): string {
  const text = (update.content ?? [])
    .map((c) =>
      c.type === "content" && c.content.type === "text" ? c.content.text : c.type === "diff" ? c.path : "",
    )
    .filter(Boolean)
    .join("\n");
  return text || (typeof update.rawOutput === "string" ? update.rawOutput : "");
}

export function createRecorder(path: string): Recorder {
  let kept: Kept | null = null;
  const kinds = new Map<string, string>();

  const recorder: Recorder = {
    path,
    write(entry) {
      appendFileSync(path, `${JSON.stringify(entry)}\n`);
    },
    flush() {
      const entry = kept;
      kept = null;
      if (entry?.type === "tool") {
        const { toolCallId, rawInput, title } = entry.call;
        recorder.write({
          type: "tool_use",
          at: now(),
          toolUseId: toolCallId,
          toolName: recorder.kindOf(toolCallId),
          input: hasInput(rawInput) ? rawInput : { title: title ?? "" },
        });
      } else if (entry?.text.trim()) recorder.write({ type: entry.type, at: now(), text: entry.text });
    },
    text(type, block) {
      if (block.type !== "text") return;
      if (kept?.type !== type) recorder.flush();
      if (kept?.type === type) kept.text += block.text;
      else kept = { type, text: block.text };
    },
    tool(call) {
      const id = call.toolCallId;
      const seen = kinds.has(id);
      kinds.set(id, call.kind ?? kinds.get(id) ?? "other");
      if (kept?.type === "tool" && kept.call.toolCallId === id) {
        if (call.title) kept.call.title = call.title;
        if (hasInput(call.rawInput)) kept.call.rawInput = call.rawInput;
        return false;
      }
      if (seen) return false;
      recorder.flush();
      kept = { type: "tool", call: { toolCallId: id, title: call.title, rawInput: call.rawInput } };
      return true;
    },
    kindOf: (toolCallId) => kinds.get(toolCallId) ?? "other",
    toolResult(update) {
      recorder.flush();
      recorder.write({
        type: "tool_result",
        at: now(),
        toolUseId: update.toolCallId,
        text: resultText(update),
        isError: update.status === "failed",
      });
    },
    plan(entries) {
      recorder.flush();
      recorder.write({
        type: "plan",
        at: now(),
        text: entries.map((e) => `[${e.status}] ${e.content}`).join("\n"),
      });
    },
  };
  return recorder;
}
