import { join } from "node:path";
import type { AgentAdapter, PendingDialog } from "../agent.ts";
import { conversationFiles } from "../history.ts";
import { isCliProcess } from "../process.ts";
import { questionAnswerKeys } from "../question-keys.ts";
import type { PermissionMode } from "../vocabulary.ts";
import { geminiAcp } from "./acp.ts";
import { conversationIdOf, findTranscript } from "./files.ts";
import { geminiTranscriptFormat } from "./format.ts";
import { HOOK_EVENTS, readHook } from "./hooks.ts";
import { APPROVAL_MODES, geminiDir, prepareGeminiLaunch } from "./launch.ts";
import { GEMINI_PRICES } from "./prices.ts";
import { createGeminiTranscriptReader } from "./reader.ts";
import { readScreen } from "./screen.ts";
import { denyReply, toolCategory } from "./tools.ts";

/** The Gemini CLI (@google/gemini-cli, pinned 0.61.0) behind the AgentAdapter seam. */
export function createGeminiAdapter(env: Parameters<typeof prepareGeminiLaunch>[1]): AgentAdapter {
  const adapter: AgentAdapter = {
    name: "gemini",
    displayName: "Gemini CLI",
    provider: "gcp.gemini",
    cli: { command: "gemini", package: "@google/gemini-cli", versionFlag: "--version" },
    verifiedVersions: ["0.61.0"],
    probeFlags: ["--session-id", "--approval-mode", "--resume", "--acp"],
    forVersion: () => adapter,
    drivers: ["tmux", "acp"],
    acp: geminiAcp(env),
    capabilities: ["hooks", "transcript", "resume", "fork", "questions", "policy"],
    permissionModes: Object.keys(APPROVAL_MODES) as PermissionMode[],
    prices: GEMINI_PRICES,
    isAgentProcess: isGeminiProcess,
    hooks: { events: HOOK_EVENTS, read: (event, payload) => readHook(event, payload, geminiDir(env)) },
    prepareLaunch: (request) => prepareGeminiLaunch(request, env),
    readScreen: (text, options) => readScreen(text, options),
    // The CLI records the prompt as it was typed (tabs, spaces and all): only its ends may differ.
    isSubmission: (typed, recorded) => typed.trim() === recorded.trim(),
    // `/commands` and `!shell` input never reach BeforeAgent nor the session file.
    recordsLate: (text) => /^[!/]/.test(text.trimStart()),
    transcript: {
      format: geminiTranscriptFormat,
      find: (_workDir, sessionId) => findTranscript(geminiDir(env), sessionId),
      history: () =>
        conversationFiles(join(geminiDir(env), "tmp"), "*/chats/session-*.jsonl", conversationIdOf),
      createReader: createGeminiTranscriptReader,
    },
    policy: {
      tool(event, payload) {
        if (event !== "BeforeTool") return null;
        const name = typeof payload.tool_name === "string" ? payload.tool_name : "";
        return name ? { name, category: toolCategory(name) } : null;
      },
      deny: denyReply,
    },
    keys: {
      approve: approveKeys,
      // Escape is "No, suggest changes" in a tool dialog, cancel in the others; "3. Don't trust".
      reject: (pending) => (pending.kind === "trust" ? ["3"] : ["Escape"]),
      // ask_user's last row is "Enter a custom value".
      answer: (pending, answer) => questionAnswerKeys(pending, answer, 1),
      // Escape cancels a streaming reply and a running tool. (C-c on an empty input arms quit.)
      interrupt: ["Escape"],
      escape: ["Escape"],
      submit: ["Enter"],
      clearInput: ["C-u"],
    },
  };
  return adapter;
}

/**
 * A digit picks its option and confirms at once. "1. Allow once" for a tool, "1. Trust folder";
 * for a plan "2. Yes, manually accept edits" keeps the session's permission mode.
 */
function approveKeys(pending: PendingDialog): string[] {
  return pending.kind === "plan" ? ["2"] : ["1"];
}

/** The CLI runs as `gemini` (npm's bin) or node with the package's bundle; a shell naming it is not one. */
export function isGeminiProcess(argv: readonly string[]): boolean {
  return isCliProcess(argv, "gemini", /@google\/gemini-cli\/|(?:^|\/)gemini$/);
}
