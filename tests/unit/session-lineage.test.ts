import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { morePermissive, PERMISSION_MODES, PERMISSIVENESS } from "../../src/agents/vocabulary.ts";
import { createSessionRepo, type SessionRecord } from "../../src/sessions/index.ts";
import { createLineage } from "../../src/sessions/lineage.ts";
import { createOffspring } from "../../src/sessions/offspring.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { sampleSession } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";

/** A family of sessions in a real (in-memory) session table. */
function family() {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  const add = (overrides: Partial<SessionRecord> = {}) => {
    const rec = sampleSession(overrides);
    repo.insert(rec);
    return rec;
  };
  return { repo, add, lineage: createLineage(repo) };
}

describe("permissiveness", () => {
  test("orders every permission mode once, plan lowest, bypassPermissions highest", () => {
    expect([...PERMISSIVENESS].sort()).toEqual([...PERMISSION_MODES].sort());
    expect(PERMISSIVENESS[0]).toBe("plan");
    expect(PERMISSIVENESS.at(-1)).toBe("bypassPermissions");
    expect(morePermissive("bypassPermissions", "acceptEdits")).toBe(true);
    expect(morePermissive("acceptEdits", "default")).toBe(true);
    expect(morePermissive("default", "default")).toBe(false);
    expect(morePermissive("plan", "default")).toBe(false);
  });
});

describe("the family tree of sessions", () => {
  test("a session key sees its session and all below it, whatever the tenant; nothing beside or above", () => {
    const { add, lineage } = family();
    const root = add();
    const mine = add({ parentId: root.id });
    const child = add({ parentId: mine.id, tenantId: "t1" });
    const grandchild = add({ parentId: child.id, status: "killed" });
    const sibling = add({ parentId: root.id });
    const stranger = add();
    const sees = lineage.visibleTo({ sessionId: mine.id });
    const seen = [root, mine, child, grandchild, sibling, stranger].filter(sees).map((s) => s.id);
    expect(seen).toEqual([mine.id, child.id, grandchild.id]);
    // A tenant and a session together: both must hold.
    const both = lineage.visibleTo({ sessionId: mine.id, tenantId: "t1" });
    expect([mine, child, grandchild].filter(both).map((s) => s.id)).toEqual([child.id]);
    expect(lineage.sees({ sessionId: mine.id }, stranger.id)).toBe(false);
    expect(lineage.sees({ sessionId: mine.id }, "no-such-session")).toBe(false);
    // Nobody named sees everything, even what is gone.
    expect(lineage.sees(undefined, "no-such-session")).toBe(true);
    expect(lineage.sees({ tenantId: null, sessionId: null }, stranger.id)).toBe(true);
  });

  test("depth counts parents up to the root; the running descendants are found under an ended parent too", () => {
    const { add, lineage } = family();
    const root = add();
    const child = add({ parentId: root.id, status: "killed" });
    const grandchild = add({ parentId: child.id, status: "working" });
    const other = add({ status: "working" });
    expect(lineage.depthOf(root.id)).toBe(0);
    expect(lineage.depthOf(grandchild.id)).toBe(2);
    expect(lineage.liveDescendants(root.id).map((s) => s.id)).toEqual([grandchild.id]);
    expect(lineage.liveChildren(root.id)).toEqual([]);
    expect(lineage.liveDescendants(other.id)).toEqual([]);
  });
});

describe("what a session key may create", () => {
  const home = tempDir("ag-offspring-");
  const work = join(home, "work");
  mkdirSync(join(work, "sub"), { recursive: true });
  symlinkSync(tempDir("ag-offspring-out-"), join(work, "out"));

  function offspring(limits = { maxDepth: 3, maxChildren: 2 }) {
    const tree = family();
    const creator = tree.add({
      workDir: work,
      status: "working",
      permissionMode: "acceptEdits",
      agentCommand: "agent --flag",
      env: { PROJECT: "x" },
    });
    const rules = createOffspring({ ...tree, limits, defaultMode: "default" });
    return { ...tree, creator, rules, owner: { sessionId: creator.id } };
  }

  test("anyone but a session key has no bounds here (its tenant's are checked elsewhere)", () => {
    const { rules } = offspring();
    expect(
      rules.parentFor({ tenantId: "t1" }, { workDir: "/", permissionMode: "bypassPermissions" }),
    ).toBeNull();
    expect(rules.parentFor(undefined, { workDir: "/" })).toBeNull();
  });

  test("within the creator's mode, real folder, program and environment: its child", () => {
    const { rules, creator, owner } = offspring();
    expect(rules.parentFor(owner, { workDir: join(work, "sub"), permissionMode: "plan" })).toBe(creator.id);
    expect(
      rules.parentFor(owner, { workDir: work, agentCommand: "agent --flag", env: { PROJECT: "x" } }),
    ).toBe(creator.id);
    const refused = (asked: Parameters<typeof rules.parentFor>[1], code: string) =>
      expect(() => rules.parentFor(owner, asked)).toThrow(expect.objectContaining({ code }));
    refused({ workDir: work, permissionMode: "bypassPermissions" }, "PERMISSION_MODE_DENIED");
    refused({ workDir: work, permissionMode: "auto" }, "PERMISSION_MODE_DENIED");
    refused({ workDir: join(work, "out") }, "CREATOR_WORKDIR_DENIED");
    refused({ workDir: join(work, "sub", "..", "..") }, "CREATOR_WORKDIR_DENIED");
    refused({ workDir: `${work}2` }, "CREATOR_WORKDIR_DENIED");
    refused({ workDir: work, agentCommand: "sh" }, "FORBIDDEN");
    refused({ workDir: work, env: { PROJECT: "y" } }, "FORBIDDEN");
    refused({ workDir: work, env: { PATH: "/tmp" } }, "FORBIDDEN");
  });

  test("a key whose session has ended creates nothing", () => {
    const { rules, add } = offspring();
    const gone = add({ status: "completed", workDir: work });
    expect(() => rules.parentFor({ sessionId: gone.id }, { workDir: work })).toThrow(
      expect.objectContaining({ code: "SESSION_NOT_FOUND" }),
    );
  });

  test("creates side by side cannot overshoot the number of running children", async () => {
    const { rules, creator, owner, add } = offspring();
    const gate = Promise.withResolvers<void>();
    const store = () => gate.promise.then(() => add({ parentId: creator.id, status: "working" }));
    const first = rules.within(owner, creator.id, store);
    const second = rules.within(owner, creator.id, store);
    // Two places are taken while neither is stored yet: a third is refused at once.
    await expect(rules.within(owner, creator.id, store)).rejects.toMatchObject({
      code: "SESSION_CHILDREN_LIMIT",
    });
    gate.resolve();
    await Promise.all([first, second]);
    await expect(rules.within(owner, creator.id, store)).rejects.toMatchObject({
      code: "SESSION_CHILDREN_LIMIT",
    });
    // A failed create gives its place back.
    const { rules: fresh, creator: other, owner: theirs } = offspring();
    await expect(
      fresh.within(theirs, other.id, () => Promise.reject(new Error("launch failed"))),
    ).rejects.toThrow("launch failed");
    await fresh.within(theirs, other.id, async () => {});
    await fresh.within(theirs, other.id, async () => {});
  });

  test("no deeper than maxDepth below a session nobody created", async () => {
    const { rules, creator, owner, add } = offspring({ maxDepth: 2, maxChildren: 8 });
    const child = add({ parentId: creator.id, status: "working" });
    const grandchild = add({ parentId: child.id, status: "working" });
    await rules.within(owner, child.id, async () => {});
    await expect(rules.within(owner, grandchild.id, async () => {})).rejects.toMatchObject({
      code: "SESSION_DEPTH_LIMIT",
    });
    // Not asked with a session key: no bound.
    await rules.within(undefined, grandchild.id, async () => {});
  });
});
