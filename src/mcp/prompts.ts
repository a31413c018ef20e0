import type { TranscriptCursorPage, TranscriptMessage } from "../transcript/cursor.ts";
import { asProtocolError, describeFailure, ProtocolError } from "./errors.ts";
import type { ToolApi } from "./tools.ts";

/**
 * SPEC's three prompts. Prompt arguments are strings (MCP); a prompt gives the client's model
 * the instructions and, for debug_session, the facts it needs, fetched from the server.
 */

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

interface PromptDefinition {
  name: string;
  description: string;
  arguments: PromptArgument[];
  build(api: ToolApi, args: Record<string, string>): Promise<string>;
}

const repoArguments: PromptArgument[] = [
  {
    name: "repoOwner",
    description: "owner of the GitHub repository (default: the checkout's remote)",
    required: false,
  },
  {
    name: "repoName",
    description: "name of the GitHub repository (default: the checkout's remote)",
    required: false,
  },
];

/** ` (owner/name)` and ` --repo owner/name` when both are given; nothing lets `gh` use the checkout. */
function repository(args: Record<string, string>) {
  const { repoOwner, repoName } = args;
  if (!repoOwner || !repoName) return { label: "", flag: "" };
  return { label: ` of ${repoOwner}/${repoName}`, flag: ` --repo ${repoOwner}/${repoName}` };
}

const SUPERVISE =
  "Follow it with get_status and get_transcript until it is idle. When it waits on a permission prompt, " +
  "read what it wants to do (get_status shows pendingPermission, capture_pane the screen) and answer with " +
  "approve_permission or reject_permission.";

const workDirArgument: PromptArgument = {
  name: "workDir",
  description: "absolute path of the repository checkout",
  required: true,
};

/**
 * A prompt that has an ag session work on a GitHub issue or pull request in a checkout, and
 * supervises it: the steps say what the session is asked (`task`, after "asking the agent to"),
 * what the supervisor refuses besides (`refuse`) and what it reports.
 */
function githubPrompt(definition: {
  name: string;
  description: string;
  number: PromptArgument;
  steps(
    args: Record<string, string>,
    repo: ReturnType<typeof repository>,
  ): {
    title: string;
    task: string;
    refuse?: string;
    report: string;
  };
}): PromptDefinition {
  const { name, description, number, steps } = definition;
  return {
    name,
    description,
    arguments: [number, workDirArgument, ...repoArguments],
    async build(_api, args) {
      const { title, task, refuse, report } = steps(args, repository(args));
      return [
        title,
        "",
        `1. Call create_session with workDir "${args.workDir}" and a prompt asking the agent to ${task}`,
        `2. ${SUPERVISE}${refuse ? ` ${refuse}` : ""}`,
        `3. ${report}`,
      ].join("\n");
    },
  };
}

const implementIssue = githubPrompt({
  name: "implement_issue",
  description: "Have an ag session implement a GitHub issue, supervise it, and report",
  number: { name: "issueNumber", description: "the issue's number", required: true },
  steps: (args, repo) => ({
    title: `Implement GitHub issue #${args.issueNumber}${repo.label} in ${args.workDir}, using an ag session.`,
    task:
      `read the issue (\`gh issue view ${args.issueNumber}${repo.flag}\`), implement it, add or update tests, ` +
      "and run them.",
    report:
      "When it is done, call get_session_summary and report what changed, how the tests went, and anything left open.",
  }),
});

const reviewPr = githubPrompt({
  name: "review_pr",
  description: "Have an ag session review a GitHub pull request, and report its findings",
  number: { name: "prNumber", description: "the pull request's number", required: true },
  steps: (args, repo) => ({
    title: `Review pull request #${args.prNumber}${repo.label} with an ag session in ${args.workDir}.`,
    task:
      `read the pull request (\`gh pr view ${args.prNumber}${repo.flag}\` and \`gh pr diff ${args.prNumber}${repo.flag}\`) ` +
      "and review it for correctness, tests, security and readability, without changing any file.",
    refuse: "Reject any permission that would modify the checkout.",
    report:
      "Report the review: a verdict (approve or request changes) and each finding with its file and line.",
  }),
});

const debugSession: PromptDefinition = {
  name: "debug_session",
  description: "Diagnose a session from its status, recent transcript and terminal screen",
  arguments: [{ name: "sessionId", description: "the session's id", required: true }],
  async build(api, args) {
    const path = `/v1/sessions/${encodeURIComponent(args.sessionId!)}`;
    const status = await api.get<{ name: string; workDir: string }>(path);
    const [transcript, pane] = await Promise.all([
      api
        .get<TranscriptCursorPage>(`${path}/transcript/cursor?limit=30`)
        .then(renderTranscript, describeFailure),
      api.get<{ content: string }>(`${path}/pane`).then((p) => p.content, describeFailure),
    ]);
    return [
      `Diagnose ag session ${args.sessionId} ("${status.name}", in ${status.workDir}) from its status, ` +
        "its recent transcript and its terminal screen below. Say what state the agent is in and what it " +
        "was doing, whether anything is wrong (stalled, waiting on a permission or a question, API errors, " +
        "a dialog, crashed), and the next step: which ag tool to call (send_message, approve_permission, " +
        "reject_permission, interrupt_session, escape_session, kill_session) and with what.",
      "",
      "## Status",
      fence(JSON.stringify(status, null, 2), "json"),
      "",
      "## Transcript (newest entries, oldest first)",
      fence(transcript),
      "",
      "## Screen",
      fence(pane),
    ].join("\n");
  },
};

export const PROMPTS: readonly PromptDefinition[] = [implementIssue, reviewPr, debugSession];

export function promptInfos() {
  return PROMPTS.map(({ name, description, arguments: args }) => ({ name, description, arguments: args }));
}

export async function getPrompt(api: ToolApi, name: string, args: Record<string, string> = {}) {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt) throw new ProtocolError(-32602, `no prompt ${name}`);
  const missing = prompt.arguments.filter((a) => a.required && !args[a.name]).map((a) => a.name);
  if (missing.length)
    throw new ProtocolError(-32602, `missing argument(s) of ${name}: ${missing.join(", ")}`);
  try {
    const text = await prompt.build(api, args);
    return {
      description: prompt.description,
      messages: [{ role: "user" as const, content: { type: "text" as const, text } }],
    };
  } catch (error) {
    throw asProtocolError(error);
  }
}

/** One line per entry; long texts are cut, the model needs the gist of each step. */
function renderTranscript(page: TranscriptCursorPage): string {
  if (page.messages.length === 0) return "(no entries yet)";
  return page.messages.map(renderEntry).join("\n");
}

function renderEntry(m: TranscriptMessage): string {
  const what =
    m.kind === "tool_use" || m.kind === "tool_result" ? `${m.kind} ${m.toolName ?? ""}`.trim() : m.kind;
  const text = m.text.length > 600 ? `${m.text.slice(0, 600)}…` : m.text;
  return `#${m.id} ${m.role} ${what}${m.isError ? " (error)" : ""}: ${text.replaceAll("\n", "\n    ")}`;
}

/** A fence longer than any backtick run inside, so a screen cannot close it early. */
function fence(text: string, lang = ""): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${text}\n${ticks}`;
}
