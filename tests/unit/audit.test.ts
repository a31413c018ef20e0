import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { createAuditLog, GENESIS_HASH, recordHash, verifyChain } from "../../src/audit/index.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { createManualClock } from "../fakes/clock.ts";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

function auditDb() {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  return db;
}

const entry = (action: string, target: string | null = null) => ({
  actor: "master",
  tenantId: null,
  action,
  target,
  outcome: "success" as const,
  ip: "127.0.0.1",
});

describe("the hash chain", () => {
  test("each record links to the previous one; the first to the genesis hash", () => {
    const audit = createAuditLog({ db: auditDb(), clock: createManualClock() });
    const first = audit.append(entry("session.create", "a"));
    const second = audit.append(entry("session.kill", "a"));
    expect(first).toMatchObject({ id: 1, prevHash: GENESIS_HASH });
    expect(second.prevHash).toBe(first.hash);
    expect(second.hash).toBe(recordHash({ ...second, hash: undefined } as never));
    expect(audit.verify()).toEqual({ ok: true, checked: 2, brokenAt: null });
  });

  test("rows cannot be updated or deleted through SQL (triggers refuse)", () => {
    const db = auditDb();
    const audit = createAuditLog({ db, clock: createManualClock() });
    audit.append(entry("session.create", "a"));
    expect(() => db.run("UPDATE audit SET target = 'b' WHERE id = 1")).toThrow(/append-only/);
    expect(() => db.run("DELETE FROM audit WHERE id = 1")).toThrow(/append-only/);
    expect(audit.list()[0]!.target).toBe("a");
  });

  test.each([
    ["a changed field", "UPDATE audit SET action = 'session.create' WHERE id = 2", 2],
    ["a changed outcome", "UPDATE audit SET outcome = 'failure' WHERE id = 2", 2],
    ["a deleted record", "DELETE FROM audit WHERE id = 2", 3],
    [
      "a record appended by hand",
      "INSERT INTO audit VALUES (5, '2026-01-01T00:00:00.000Z', 'x', NULL, 'session.kill', NULL, 'success', NULL, 'f00d', 'beef')",
      5,
    ],
  ])("tampering (%s) breaks the chain at the right record", (_, sql, brokenAt) => {
    const db = auditDb();
    const audit = createAuditLog({ db, clock: createManualClock() });
    for (const action of ["session.create", "session.approve", "session.reject", "session.kill"])
      audit.append(entry(action, "s1"));
    expect(audit.verify().ok).toBe(true);
    // Someone with the database file can drop the triggers; the chain still tells.
    db.run("DROP TRIGGER audit_no_update");
    db.run("DROP TRIGGER audit_no_delete");
    db.run(sql);
    expect(audit.verify()).toMatchObject({ ok: false, brokenAt });
  });

  test("verifyChain recomputes hashes: a record whose hash was recomputed still breaks its successor", () => {
    const audit = createAuditLog({ db: auditDb(), clock: createManualClock() });
    const records = [audit.append(entry("a")), audit.append(entry("b")), audit.append(entry("c"))];
    const forged = { ...records[1]!, target: "forged" };
    forged.hash = recordHash(forged);
    expect(verifyChain([records[0]!, forged, records[2]!])).toEqual({ ok: false, checked: 3, brokenAt: 3 });
  });

  test("list: newest first, limit and before page backwards", () => {
    const audit = createAuditLog({ db: auditDb(), clock: createManualClock() });
    for (let i = 0; i < 7; i++) audit.append(entry(`a${i}`));
    expect(audit.list({ limit: 3 }).map((r) => r.id)).toEqual([7, 6, 5]);
    expect(audit.list({ limit: 3, before: 5 }).map((r) => r.id)).toEqual([4, 3, 2]);
    expect(audit.list({ before: 2 }).map((r) => r.id)).toEqual([1]);
  });
});

describe("what the HTTP API records", () => {
  test("create, approve (refused), kill of sessions; template writes; reads are not recorded", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
    const { id } = (await created.json()) as Json;
    await app.request("GET", `/v1/sessions/${id}`);
    await app.request("POST", `/v1/sessions/${id}/approve`, { body: {} });
    await app.request("DELETE", `/v1/sessions/${id}`);
    await app.request("DELETE", `/v1/sessions/${id}`);
    const t = await app.request("POST", "/v1/templates", { body: { name: "t", workDir: tempDir() } });
    const templateId = ((await t.json()) as Json).id;
    const records = app.audit.list().reverse();
    expect(records.map((r) => [r.action, r.target, r.outcome, r.actor])).toEqual([
      ["session.create", id, "success", "local"],
      ["session.approve", id, "failure", "local"],
      ["session.kill", id, "success", "local"],
      ["session.kill", id, "failure", "local"],
      ["template.create", templateId, "success", "local"],
    ]);
    expect(app.audit.verify().ok).toBe(true);
  });

  test("with a token: the master is named, a bad token is recorded as a denial; GET /v1/audit pages", async () => {
    const app = testApp({ authToken: "s3cret" });
    const auth = { authorization: "Bearer s3cret" };
    await app.request("POST", "/v1/templates", { body: { name: "t", workDir: tempDir() }, headers: auth });
    await app.request("DELETE", "/v1/sessions/whatever", { headers: { authorization: "Bearer wrong" } });
    // Another address: refusals are throttled per address.
    await app.handle(new Request("http://localhost/v1/memory"), { ip: "10.9.9.9" });
    const page = (await (await app.request("GET", "/v1/audit?limit=2", { headers: auth })).json()) as Json[];
    expect(page.map((r) => [r.action, r.outcome, r.actor, r.target])).toEqual([
      ["auth.denied", "denied", "unauthenticated", "GET /v1/memory"],
      ["session.kill", "denied", "unauthenticated", "whatever"],
    ]);
    const older = (await (
      await app.request("GET", `/v1/audit?before=${page[1]!.id}`, { headers: auth })
    ).json()) as Json[];
    expect(older.map((r) => [r.action, r.actor])).toEqual([["template.create", "master"]]);
    const verify = await app.request("GET", "/v1/audit/verify", { headers: auth });
    expect(await verify.json()).toEqual({ ok: true, checked: 3, brokenAt: null });
    const bad = await app.request("GET", "/v1/audit?limit=0", { headers: auth });
    expect(bad.status).toBe(400);
  });

  test("a trailing slash or a broken escape does not dodge the record", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id } = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const killed = await app.request("DELETE", `/v1/sessions/${id}/`);
    expect(killed.status).toBe(200);
    await app.request("DELETE", "/v1/templates/%E0%A4%A");
    const records = app.audit.list().map((r) => [r.action, r.target, r.outcome]);
    expect(records).toEqual([
      ["template.delete", "%E0%A4%A", "failure"],
      ["session.kill", id, "success"],
      ["session.create", id, "success"],
    ]);
  });

  test("refusals are recorded once per address per minute, counting the rest; targets are cut", async () => {
    const app = testApp({ authToken: "s3cret" });
    const ask = (path: string, ip: string) => app.handle(new Request(`http://localhost${path}`), { ip });
    await ask(`/${"x".repeat(5000)}`, "10.0.0.1");
    // At once: past 20 failures an address's refusals are held back (slowed), one by one they add up.
    await Promise.all(Array.from({ length: 50 }, () => ask("/v1/sessions", "10.0.0.1")));
    await ask("/v1/sessions", "10.0.0.2");
    const records = app.audit.list();
    expect(records.map((r) => [r.action, r.ip])).toEqual([
      ["auth.denied", "10.0.0.2"],
      ["auth.denied", "10.0.0.1"],
    ]);
    expect(records[1]!.target!.length).toBeLessThanOrEqual(256);
  });

  test("a fractional, negative or huge limit or cursor is a 400, not a database error", async () => {
    const app = testApp();
    const huge = "999999999999999999999"; // past SQLite's integers: was a 500 (issue 15)
    for (const query of [
      "limit=1.5",
      "before=2.5",
      "limit=-1",
      `limit=${huge}`,
      `before=${huge}`,
      "limit=1e309",
    ]) {
      const response = await app.request("GET", `/v1/audit?${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });

  test("the client's address is recorded when the listener knows it", async () => {
    const app = testApp();
    await app.handle(
      new Request("http://localhost/v1/templates", {
        method: "POST",
        body: JSON.stringify({ name: "t", workDir: tempDir() }),
        headers: { "content-type": "application/json" },
      }),
      { ip: "127.0.0.9" },
    );
    expect(app.audit.list()[0]).toMatchObject({ action: "template.create", ip: "127.0.0.9" });
  });
});
