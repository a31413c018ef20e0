import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  createBudgetRepo,
  createBudgetService,
  describeCap,
  guardSessions,
  shareOf,
  standing,
  transition,
  windowsOf,
} from "../../src/budgets/index.ts";
import { budgetCell } from "../../src/cli/views.ts";
import { DEFAULT_BUDGETS } from "../../src/config/schema.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import { createEventBus } from "../../src/events/bus.ts";
import type { Session, SessionService } from "../../src/sessions/index.ts";
import { estimateCost, toSession } from "../../src/sessions/index.ts";
import { AgError } from "../../src/shared/errors.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { createManualClock } from "../fakes/clock.ts";
import { sampleSession } from "../helpers/app.ts";
import { sampleInput } from "../helpers/events.ts";
import { until } from "../helpers/until.ts";

describe("budget arithmetic", () => {
  test("a share is spend over cap, in dollars or tokens, whichever is further; no cap is 0, a zero cap spent at once", () => {
    expect(shareOf({ budget: "session", usd: 2, spentUsd: 1 })).toBe(0.5);
    expect(shareOf({ budget: "session", usd: 2, spentUsd: 1, tokens: 100, spentTokens: 90 })).toBe(0.9);
    expect(shareOf({ budget: "session", usd: null, spentUsd: 5 })).toBe(0);
    expect(shareOf({ budget: "session", usd: 0, spentUsd: 0 })).toBe(Number.POSITIVE_INFINITY);
  });

  test("the state: reached by the first spent budget, a warning past the share, ok below or without caps", () => {
    const session = { budget: "session", usd: 1, spentUsd: 0.5 };
    const month = { budget: "tenant:acme:month", usd: 10, spentUsd: 10 };
    expect(standing([], 0.8)).toEqual({ state: "ok", by: null });
    expect(standing([{ budget: "session", usd: null, spentUsd: 3 }], 0.8).state).toBe("ok");
    expect(standing([session], 0.8)).toEqual({ state: "ok", by: session });
    expect(standing([{ ...session, spentUsd: 0.8 }], 0.8).state).toBe("warning");
    expect(standing([session, month], 0.8)).toEqual({ state: "reached", by: month });
  });

  test("a change of state names its event; staying put or dropping below the warning says nothing", () => {
    expect(transition("ok", "warning")).toBe("budget.warning");
    expect(transition("warning", "reached")).toBe("budget.reached");
    expect(transition("ok", "reached")).toBe("budget.reached");
    expect(transition("reached", "ok")).toBe("budget.raised");
    expect(transition("reached", "warning")).toBe("budget.raised");
    expect(transition("warning", "ok")).toBeNull();
    expect(transition("reached", "reached")).toBeNull();
  });

  test("day and month windows start at UTC midnight and the first of the month", () => {
    expect(windowsOf(Date.UTC(2026, 10, 29, 9, 30))).toEqual({
      day: "2026-11-29T00:00:00.000Z",
      month: "2026-11-01T00:00:00.000Z",
    });
  });

  test("a budget is described by its name, cap and spend", () => {
    expect(describeCap({ budget: "session", usd: 0.01, spentUsd: 0.0123 })).toBe(
      "session budget $0.0100 ($0.0123 spent)",
    );
    expect(describeCap({ budget: "server:day", usd: 25, spentUsd: 30 })).toBe(
      "server:day budget $25.00 ($30.00 spent)",
    );
  });

  test("an unknown model is priced by the default and flagged, never free", () => {
    const tokens = { input: 1_000_000, output: 0, cacheRead: 0, cacheCreation: 0 };
    const table = { opus: { input: 15, output: 75 } };
    expect(estimateCost({ "mystery-1": tokens }, table)).toEqual({ usd: 0, unpriced: ["mystery-1"] });
    expect(estimateCost({ "mystery-1": tokens }, table, { input: 20, output: 80 })).toEqual({
      usd: 20,
      unpriced: ["mystery-1"],
    });
  });
});

/** Sessions as the budget service sees them: what each spent is set by the test. */
function fakeSessions(clockNow: () => number) {
  const sessions = new Map<string, Session>();
  const spent = new Map<string, number>();
  const sent: Array<{ id: string; text: string }> = [];
  const interrupted: string[] = [];
  const service: Pick<SessionService, "get" | "list" | "metrics" | "send" | "interrupt"> = {
    get(id) {
      const found = sessions.get(id);
      if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
      return found;
    },
    list: () => [...sessions.values()],
    async metrics(id) {
      const usd = spent.get(id) ?? 0;
      return {
        id,
        tokens: { input: Math.round(usd * 1000), output: 0, cacheRead: 0, cacheCreation: 0 },
        estimatedCost: { usd, unpriced: [] },
        turns: 1,
        toolCalls: 0,
        deliveries: { sent: 0, delivered: 0, failed: 0, attempts: 0 },
        timeInStateMs: {},
        followingSince: new Date(clockNow()).toISOString(),
        agentProcess: null,
      };
    },
    async send(id, text) {
      sent.push({ id, text });
      return { delivered: true, attempts: 1 };
    },
    async interrupt(id) {
      interrupted.push(id);
      return service.get(id);
    },
  };
  function add(id: string, tenantId: string | null = null, status: Session["status"] = "idle") {
    const at = new Date(clockNow()).toISOString();
    const times = { createdAt: at, updatedAt: at, lastActivityAt: at };
    const record = sampleSession({ id, name: `s-${id}`, workDir: "/work", status, tenantId, ...times });
    sessions.set(id, toSession({ ...record, stallThresholdMs: 1000 }));
  }
  return { service, spent, sent, interrupted, add, sessions };
}

function world(settings: Partial<typeof DEFAULT_BUDGETS> = {}) {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const clock = createManualClock(Date.UTC(2026, 10, 29, 9));
  const bus = createEventBus();
  const events: AgEvent[] = [];
  bus.subscribe((e) => e.event.startsWith("budget.") && events.push(e));
  const fake = fakeSessions(clock.now);
  const budgets = createBudgetService({
    repo: createBudgetRepo(db),
    bus,
    clock,
    logger: createLogger({ level: "silent", json: false }),
    settings: { ...DEFAULT_BUDGETS, ...settings },
    sessions: fake.service,
    link: (id) => `http://console/#/sessions/${id}`,
  });
  /** A turn ends: the bus says so, as the sessions domain does. */
  const turnEnds = (id: string) =>
    bus.publish(sampleInput("session.turn_ended", { session: { id, name: `s-${id}`, workDir: "/work" } }));
  return { budgets, events, fake, bus, clock, turnEnds, db };
}

async function refusal(work: Promise<unknown>): Promise<AgError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgError);
  return error as AgError;
}

describe("a session's budget", () => {
  test("warns at the share, pauses at the cap, refuses and holds a prompt; a raise resumes it and delivers the held prompt once", async () => {
    const { budgets, events, fake, turnEnds } = world();
    fake.add("a");
    budgets.attach(fake.service.get("a"), { usd: 1 });
    fake.spent.set("a", 0.85);
    turnEnds("a");
    await until(() => events.length === 1);
    expect(events[0]!.event).toBe("budget.warning");
    expect(events[0]!.meta).toMatchObject({ budget: "session", usd: 1, spentUsd: 0.85, state: "warning" });

    fake.spent.set("a", 1.2);
    turnEnds("a");
    await until(() => events.length === 2);
    expect(events[1]!.event).toBe("budget.reached");
    expect(events[1]!.meta).toMatchObject({ state: "reached", url: "http://console/#/sessions/a" });
    expect(budgets.view("a")).toMatchObject({
      usd: 1,
      spentUsd: 1.2,
      state: "reached",
      reachedBy: "session",
    });

    const refused = await refusal(budgets.admit("a", "go on"));
    expect(refused.code).toBe("BUDGET_REACHED");
    expect(refused.statusCode).toBe(402);
    expect(refused.message).toContain("session budget $1.00 ($1.20 spent)");
    expect(budgets.view("a")!.heldPrompt).toBe(true);
    expect(fake.sent).toEqual([]);

    const raised = await budgets.raise("a", { usd: 5 });
    expect(raised).toMatchObject({ usd: 5, state: "ok", heldPrompt: false, reachedBy: null });
    expect(events.at(-1)!.event).toBe("budget.raised");
    expect(fake.sent).toEqual([{ id: "a", text: "go on" }]);
    await budgets.raise("a", { usd: 6 });
    expect(fake.sent).toHaveLength(1);
    await budgets.admit("a", "next");
  });

  test("stop here drops the held prompt and keeps the session paused; clearing the cap resumes it with nothing to deliver", async () => {
    const { budgets, events, fake, turnEnds } = world();
    fake.add("b");
    budgets.attach(fake.service.get("b"), { usd: 0.5 });
    fake.spent.set("b", 0.6);
    turnEnds("b");
    await until(() => events.some((e) => e.event === "budget.reached"));
    await refusal(budgets.admit("b", "held"));
    expect(budgets.stop("b")).toMatchObject({ state: "reached", heldPrompt: false });
    expect((await refusal(budgets.admit("b", "again"))).code).toBe("BUDGET_REACHED");
    budgets.stop("b");
    expect(await budgets.raise("b", { usd: null })).toMatchObject({ usd: null, state: "ok" });
    expect(fake.sent).toEqual([]);
  });

  test("a token cap pauses like a dollar cap", async () => {
    const { budgets, events, fake, turnEnds } = world();
    fake.add("t");
    budgets.attach(fake.service.get("t"), { usd: null, tokens: 100 });
    fake.spent.set("t", 0.2); // 200 tokens in the fake
    turnEnds("t");
    await until(() => events.some((e) => e.event === "budget.reached"));
    expect((await refusal(budgets.admit("t", "x"))).message).toContain(
      "session budget 100 tokens (200 tokens spent)",
    );
  });

  test("a prompt is checked against a fresh count: spend since the last turn's end counts", async () => {
    const { budgets, fake } = world();
    fake.add("c");
    budgets.attach(fake.service.get("c"), { usd: 0.1 });
    fake.spent.set("c", 0.2);
    expect((await refusal(budgets.admit("c", "x"))).code).toBe("BUDGET_REACHED");
  });

  test("interruptAtCap interrupts a turn that spends past the cap", async () => {
    const { budgets, events, fake, bus } = world({ interruptAtCap: true });
    fake.add("w", null, "working");
    budgets.attach(fake.service.get("w"), { usd: 0.1 });
    fake.spent.set("w", 0.3);
    bus.publish({
      event: "message.assistant",
      session: { id: "w", name: "s-w", workDir: "/work" },
      detail: "partial",
      meta: { uuid: "m1", timestamp: null, sidechain: false },
    });
    await until(() => fake.interrupted.length === 1);
    expect(events.map((e) => e.event)).toEqual(["budget.reached"]);
  });
});

test("ag list's BUDGET column: spent of the cap, paused with the budget that paused it, - without a cap", () => {
  const budget = {
    usd: 1,
    tokens: null,
    spentUsd: 0.4,
    spentTokens: 10,
    state: "ok" as const,
    reachedBy: null,
    interruptAtCap: false,
    heldPrompt: false,
    unpriced: [],
  };
  expect(budgetCell(null)).toBe("-");
  expect(budgetCell({ ...budget, usd: null })).toBe("-");
  expect(budgetCell(budget)).toBe("$0.40/$1.00");
  expect(budgetCell({ ...budget, spentUsd: 1.5, state: "reached", reachedBy: "session" })).toBe(
    "paused $1.50/$1.00",
  );
  expect(budgetCell({ ...budget, state: "reached", reachedBy: "tenant:acme:month" })).toBe(
    "paused (tenant:acme:month)",
  );
});

test("a session's own interruptAtCap goes over the server's: its turn is interrupted, another's is let finish", async () => {
  const { budgets, events, fake, bus } = world();
  fake.add("own", null, "working");
  fake.add("other", null, "working");
  budgets.attach(fake.service.get("own"), { usd: 0.1, interruptAtCap: true });
  budgets.attach(fake.service.get("other"), { usd: 0.1 });
  expect(budgets.view("own")!.interruptAtCap).toBe(true);
  expect(budgets.view("other")!.interruptAtCap).toBe(false);
  fake.spent.set("own", 0.3);
  fake.spent.set("other", 0.3);
  for (const id of ["own", "other"])
    bus.publish({
      event: "message.assistant",
      session: { id, name: `s-${id}`, workDir: "/work" },
      detail: "partial",
      meta: { uuid: `m-${id}`, timestamp: null, sidechain: false },
    });
  // Both are paused; only the one that asked for it is interrupted.
  await until(() => events.filter((e) => e.event === "budget.reached").length === 2);
  await until(() => fake.interrupted.length === 1);
  expect(fake.interrupted).toEqual(["own"]);
});

describe("tenant and server budgets", () => {
  test("a tenant's monthly budget spent by one session pauses all that tenant's sessions, and only them", async () => {
    const { budgets, events, fake, turnEnds } = world({ tenants: { acme: { monthUsd: 1 } } });
    fake.add("x1", "acme");
    fake.add("x2", "acme");
    fake.add("y1", "other");
    fake.spent.set("x1", 0.85);
    turnEnds("x1");
    await until(() => events.filter((e) => e.event === "budget.warning").length === 2);
    fake.spent.set("x2", 0.3);
    turnEnds("x2");
    await until(() => events.filter((e) => e.event === "budget.reached").length === 2);
    const reached = events.filter((e) => e.event === "budget.reached");
    expect(reached.map((e) => e.session!.id).sort()).toEqual(["x1", "x2"]);
    expect(reached[0]!.meta).toMatchObject({ budget: "tenant:acme:month", usd: 1, spentUsd: 1.15 });
    expect((await refusal(budgets.admit("x1", "x"))).message).toContain("tenant:acme:month budget");
    await budgets.admit("y1", "fine");

    const overview = budgets.overview();
    expect(overview.scopes).toContainEqual({
      budget: "tenant:acme:month",
      usd: 1,
      spentUsd: 1.15,
      share: 1.15,
    });

    const scope = await budgets.setScope("tenant:acme:month", 3);
    expect(scope).toMatchObject({ usd: 3, spentUsd: 1.15 });
    expect(budgets.view("x1")!.state).toBe("ok");
    expect(budgets.view("x2")!.state).toBe("ok");
    expect(fake.sent).toEqual([{ id: "x1", text: "x" }]);
  });

  test("the server's daily budget counts every session's spend of the day", async () => {
    const { budgets, events, fake, turnEnds, clock } = world({ dayUsd: 1 });
    fake.add("d1");
    fake.spent.set("d1", 0.6);
    turnEnds("d1");
    await until(() => budgets.view("d1") !== null);
    clock.advance(24 * 60 * 60 * 1000); // the next day: yesterday's spend does not count
    fake.add("d2");
    fake.spent.set("d2", 0.6);
    turnEnds("d2");
    await until(() => budgets.view("d2") !== null);
    expect(events.filter((e) => e.event === "budget.reached")).toEqual([]);
    fake.spent.set("d1", 1.2);
    turnEnds("d1");
    await until(() => events.some((e) => e.event === "budget.reached"));
    expect(budgets.overview().scopes).toContainEqual({
      budget: "server:day",
      usd: 1,
      spentUsd: 1.2,
      share: 1.2,
    });
  });

  test("a scope that is neither server nor tenant, day nor month, is refused", async () => {
    const { budgets } = world();
    expect(() => budgets.setScope("galaxy:year", 1)).toThrow(AgError);
  });
});

describe("the guard every surface reaches the sessions through", () => {
  function guarded(paused: boolean) {
    const { fake, budgets } = world();
    fake.add("p");
    const created: unknown[] = [];
    const inner = {
      ...fake.service,
      async create(input: unknown) {
        created.push(input);
        return {
          session: fake.service.get("p"),
          created: true,
          reused: false,
          promptDelivery: null,
          warnings: [],
        };
      },
    } as unknown as SessionService;
    const view = (id: string) =>
      paused && id === "p" ? { ...budgets.view(id)!, state: "reached" as const } : budgets.view(id);
    budgets.attach(fake.service.get("p"), { usd: 1 });
    const service = guardSessions(inner, { budgets: { ...budgets, view } });
    return { service, created };
  }

  test("a paused idle session in the folder is never reused: the create asks for a new session", async () => {
    const { service, created } = guarded(true);
    await service.create({ workDir: "/work", prompt: "go" });
    expect(created).toEqual([{ workDir: "/work", prompt: "go", reuse: false }]);
  });

  test("otherwise reuse is left as asked, and the budget is not passed on to the sessions domain", async () => {
    const { service, created } = guarded(false);
    await service.create({ workDir: "/work", prompt: "go", budget: { usd: 2 } });
    expect(created).toEqual([{ workDir: "/work", prompt: "go" }]);
    expect(service.get("p").budget).toMatchObject({ usd: 2 });
  });
});
