import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentAdapter, AgentEnvironment } from "../agent.ts";
import { questionAnswerKeys } from "../question-keys.ts";
import { opencodeAcp } from "./acp.ts";
import { conversationsNamed, opencodeConversationFormat } from "./conversation.ts";
import { openCodeDatabase, openCodeHistory } from "./history.ts";
import { HOOK_EVENTS, readHook } from "./hooks.ts";
import { CONVERSATION_FILE, prepareOpenCodeLaunch } from "./launch.ts";
import { OPENCODE_PERMISSION_MODES } from "./modes.ts";
import { createOpenCodeReader } from "./reader.ts";
import { isOpenCodeProcess, readOpenCodeScreen } from "./screen.ts";
import { denyReply, POLICY_EVENT, toolCategory } from "./tools.ts";

/**
 * OpenCode (pinned 1.18.33) behind the AgentAdapter seam: its TUI in tmux, a plugin of ag's in
 * the session's own config dir for hooks, policy and the conversation file (launch.ts,
 * plugin.js), and its screen as the third source; or headless over ACP (`opencode acp`, acp.ts).
 *
 * No prices of its own: OpenCode runs the models of whatever providers its user configured, and
 * the registry's table (every adapter's, merged) prices them by name, Claude's and GPT's alike.
 */
export function createOpenCodeAdapter(env: AgentEnvironment): AgentAdapter {
  // Where each session launched here keeps its conversation (its hooks name it too, and ag
  // records it): OpenCode's own history is in SQLite, keyed by its own ids.
  const conversations = new Map<string, string>();
  const adapter: AgentAdapter = {
    name: "opencode",
    displayName: "OpenCode",
    provider: "opencode",
    cli: { command: "opencode", package: "opencode-ai", versionFlag: "--version" },
    verifiedVersions: ["1.18.33"],
    probeFlags: ["--auto", "--agent", "-s"],
    forVersion: () => adapter,
    drivers: ["tmux", "acp"],
    acp: opencodeAcp,
    capabilities: ["hooks", "transcript", "resume", "fork", "questions", "policy"],
    permissionModes: OPENCODE_PERMISSION_MODES,
    prices: {},
    isAgentProcess: isOpenCodeProcess,
    async prepareLaunch(request) {
      const plan = await prepareOpenCodeLaunch(request);
      conversations.set(request.sessionId, join(request.sessionDir, CONVERSATION_FILE));
      return plan;
    },
    readScreen: (text, options) => readOpenCodeScreen(text, options),
    isSubmission,
    // Its shell mode (`!cmd`) and its own slash commands are not prompts: no chat.message for them.
    recordsLate: (text) => /^[!/]/.test(text.trimStart()),
    hooks: { events: HOOK_EVENTS, read: readHook },
    transcript: {
      format: opencodeConversationFormat,
      async find(_workDir, sessionId) {
        const file = conversations.get(sessionId);
        return file && existsSync(file) ? file : null;
      },
      createReader: createOpenCodeReader,
      // The user's own store (the launch gives each session its own config dir, never its own data).
      history: () => openCodeHistory(openCodeDatabase(env.home)),
      conversationsIn: conversationsNamed,
    },
    policy: {
      tool(event, payload) {
        if (event !== POLICY_EVENT || typeof payload.tool !== "string" || !payload.tool) return null;
        return { name: payload.tool, category: toolCategory(payload.tool) };
      },
      deny: denyReply,
    },
    keys: {
      // "Allow once" is preselected; "Reject" is two to its right. OpenCode has no start-up dialog
      // and no plan approval: those kinds never come from it.
      approve: () => ["Enter"],
      // A question is dismissed with Escape.
      reject: (pending) => (pending.kind === "question" ? ["Escape"] : ["Right", "Right", "Enter"]),
      // Its own row after the options is "Type your own answer".
      answer: questionAnswerKeys,
      // Two presses of its interrupt key (launch.ts binds Ctrl+] beside Escape).
      interrupt: ["C-]", "C-]"],
      escape: ["Escape"],
      submit: ["Enter"],
      // Clears the whole input; launch.ts unbinds it from quitting on an empty one.
      clearInput: ["C-c"],
    },
  };
  return adapter;
}

/**
 * OpenCode stores a folded paste ("[Pasted ~N lines]") with one trailing space; the comparison is
 * of the words, as typed, with the ends not counting.
 */
function isSubmission(typed: string, recorded: string): boolean {
  const words = (text: string) => text.replace(/\s+/g, " ").trim();
  return words(typed) === words(recorded);
}
