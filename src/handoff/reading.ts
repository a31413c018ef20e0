import type { Session, SessionService } from "../sessions/index.ts";
import { git, isWorkTree } from "../shared/git.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import type { BriefParts } from "./brief.ts";

/** Entries read back from the end for "the last turns whole": the last two prompts and what followed. */
const LAST_TURNS = 2;
const PAGE = 200;
/** Pages read looking for the first prompt (a very long session's first prompt may be further back). */
const MAX_PAGES = 50;

/**
 * What a brief is made of, read from the session handed off: its prompts and last turns (its
 * transcript, through the cursor), its summary, and the files changed since it began (git).
 */
export function createBriefReader(deps: {
  sessions: Pick<SessionService, "cursor" | "summary">;
  /** A tenant's runAs user: git reads its folder as it. */
  owners?: TenantUsers;
}) {
  async function parts(
    from: Session,
    note: string | null,
    trigger: BriefParts["trigger"],
  ): Promise<BriefParts> {
    const [prompts, recent, summary, changes] = await Promise.all([
      personPrompts(from.id),
      recentEntries(from.id),
      deps.sessions.summary(from.id).catch(() => null),
      changedFiles(from, []),
    ]);
    const touched = summary?.filesTouched ?? [];
    return {
      from: { id: from.id, name: from.name, agent: from.agent, workDir: from.workDir },
      trigger,
      note,
      task: prompts[0] ?? null,
      laterPrompts: prompts.slice(1),
      turns: summary?.turns ?? prompts.length,
      toolCallsByName: summary?.toolCallsByName ?? {},
      lastTurns: recent,
      changes: changes.files.length > 0 || touched.length === 0 ? changes : await changedFiles(from, touched),
      pending: from.pendingPermission,
    };
  }

  /** Every prompt a person gave the session, oldest first. */
  async function personPrompts(id: string): Promise<string[]> {
    const found: string[] = [];
    let before: number | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const got = await deps.sessions
        .cursor(id, { role: "user", limit: PAGE, ...(before ? { beforeId: before } : {}) })
        .catch(() => null);
      if (!got) break;
      found.unshift(...got.messages.filter((m) => m.kind === "prompt").map((m) => m.text));
      if (!got.has_more || got.oldest_id <= 1) break;
      before = got.oldest_id;
    }
    return found;
  }

  /** The last turns whole: from the last prompts on, every entry but thinking. */
  async function recentEntries(id: string): Promise<BriefParts["lastTurns"]> {
    const got = await deps.sessions.cursor(id, { limit: PAGE }).catch(() => null);
    if (!got) return [];
    const entries = got.messages.filter((m) => m.kind !== "thinking" && m.text.trim() !== "");
    const starts = entries.flatMap((m, i) => (m.kind === "prompt" ? [i] : []));
    const from = starts.length >= LAST_TURNS ? starts[starts.length - LAST_TURNS]! : 0;
    return entries.slice(from).map((m) => ({ role: m.role, kind: m.kind, text: m.text }));
  }

  /**
   * Files changed since the session began: in git, against its start commit (committed and not,
   * new files too); elsewhere, the files its transcript says it wrote.
   */
  async function changedFiles(from: Session, touched: readonly string[]): Promise<BriefParts["changes"]> {
    if (touched.length > 0)
      return { source: "the files its transcript says it wrote", files: [...touched], stat: null };
    const runAs = deps.owners?.(from.tenantId) ?? null;
    if (!(await isWorkTree(from.workDir, runAs)))
      return { source: "not a git repository", files: [], stat: null };
    const base = from.baseCommit ?? "HEAD";
    const run = (args: string[]) =>
      git(from.workDir, args, runAs).then((r) => (r?.code === 0 ? r.stdout : ""));
    const [names, untracked, stat] = await Promise.all([
      run(["diff", "--name-status", "--find-renames", base, "--"]),
      run(["ls-files", "--others", "--exclude-standard"]),
      run(["diff", "--stat", base, "--"]),
    ]);
    const files = [
      ...names
        .split("\n")
        .filter(Boolean)
        .map((line) => line.replace(/\t/g, " ")),
      ...untracked
        .split("\n")
        .filter(Boolean)
        .map((file) => `A ${file} (new, not in git yet)`),
    ];
    const source = from.baseCommit
      ? `git diff against ${from.baseCommit.slice(0, 12)}, the commit it started from`
      : "git diff against HEAD (its start commit is unknown)";
    return { source, files, stat: stat.trim() || null };
  }

  return { parts };
}
