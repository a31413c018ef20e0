/**
 * Starter files `ag init --from-template` writes, in Claude Code's own layout: subagents in
 * .claude/agents/<name>.md, slash commands in .claude/commands/<name>.md, skills in
 * .claude/skills/<name>/SKILL.md. Front matter is what Claude Code reads; `ag doctor` checks it.
 */

export type StarterKind = "agent" | "slash-command" | "skill";

/** Where Claude Code reads each kind of file (`glob`), and where the one named `name` goes. */
export const STARTER_LAYOUT: Readonly<Record<StarterKind, { glob: string; path(name: string): string }>> = {
  agent: { glob: ".claude/agents/**/*.md", path: (name) => `.claude/agents/${name}.md` },
  "slash-command": { glob: ".claude/commands/**/*.md", path: (name) => `.claude/commands/${name}.md` },
  skill: { glob: ".claude/skills/*/SKILL.md", path: (name) => `.claude/skills/${name}/SKILL.md` },
};

export interface StarterTemplate {
  name: string;
  kind: StarterKind;
  description: string;
  /** Paths relative to the project directory. */
  files: ReadonlyArray<{ path: string; content: string }>;
}

const codeReviewer = `---
name: code-reviewer
description: Reviews recent code changes for bugs, security problems and unclear code. Use proactively after writing or modifying code.
tools: Read, Grep, Glob, Bash
---

You are a careful senior code reviewer.

1. Run \`git diff HEAD\` (or \`git diff --staged\`) to see what changed; read the touched files.
2. Look for, in this order: incorrect behaviour, missing error handling, security problems
   (injection, secrets in code, unchecked input), missing or weak tests, unclear names and
   duplicated code.
3. Report findings grouped as **Must fix**, **Should fix** and **Consider**, each with the file,
   the line and a concrete suggestion. Say so plainly when you find nothing worth changing.

Do not edit files: you review, the caller decides.
`;

const ciRunner = `---
description: Run the project's checks (lint, type check, tests) and fix what fails
argument-hint: "[check to run, e.g. tests]"
allowed-tools: Bash, Read, Edit, Grep, Glob
---

Run this project's continuous-integration checks locally: $ARGUMENTS

1. Find how CI runs here (\`.github/workflows/\`, \`package.json\` scripts, \`Makefile\`) and run the
   same lint, type-check and test commands, in that order. With an argument, run only that check.
2. For each failure, find the cause and fix it in the code, not in the test, unless the test is
   wrong. Rerun the failing check until it passes.
3. Finish with a short summary: which checks ran, what failed, what you changed.
`;

const prReviewer = `---
description: Review a pull request and draft review comments
argument-hint: <pull request number or URL>
allowed-tools: Bash(git:*), Bash(gh:*), Read, Grep, Glob
---

Review pull request $ARGUMENTS.

1. Fetch it with \`gh pr view $ARGUMENTS\` and \`gh pr diff $ARGUMENTS\`; read the changed files in full
   where the diff alone does not show enough.
2. Check that the change does what its description says, is tested, and does not break callers.
3. Draft review comments as a list of \`path:line — comment\`, then an overall verdict:
   approve, comment or request changes. Do not post anything: show the draft.
`;

const docsWriter = `---
name: docs-writer
description: Writes and updates project documentation (README, docs/ pages, code comments) to match the code. Use when asked to document a feature, or after a change that makes the docs wrong.
---

# Docs writer

- Read the code first; document what it does today, not what it should do.
- Keep the existing structure and tone of the docs; add to the page a reader would look in.
- Lead with what the reader wants to do, then the reference details. Show one working example.
- Keep commands and file names exact; check every example against the code.
- Prefer short sentences and lists over long paragraphs.
`;

/** A template of one file, where Claude Code reads its kind. */
function starter(name: string, kind: StarterKind, description: string, content: string): StarterTemplate {
  return { name, kind, description, files: [{ path: STARTER_LAYOUT[kind].path(name), content }] };
}

export const STARTER_TEMPLATES: readonly StarterTemplate[] = [
  starter("code-reviewer", "agent", "A subagent that reviews recent changes", codeReviewer),
  starter("ci-runner", "slash-command", "/ci-runner: run the CI checks locally and fix failures", ciRunner),
  starter(
    "pr-reviewer",
    "slash-command",
    "/pr-reviewer <PR>: review a pull request and draft comments",
    prReviewer,
  ),
  starter("docs-writer", "skill", "A skill for writing documentation that matches the code", docsWriter),
];

export function findStarterTemplate(name: string): StarterTemplate | undefined {
  return STARTER_TEMPLATES.find((t) => t.name === name);
}
