import { describe, expect, test } from "bun:test";
import { createTurnLedger } from "../../src/agents/turn-ledger.ts";

describe("the turn ledger: which turn a line belongs to, by meaning", () => {
  test("by turn id: a turn's lines are its own, read before or after its start", () => {
    const ledger = createTurnLedger();
    ledger.text("early", "answer to two", { turn: "t2" });
    ledger.begin({ id: "t1", order: 1, prompt: "one" });
    ledger.begin({ id: "t2", order: 5, prompt: "two" });
    ledger.text("late", "late answer to one", { turn: "t1" });
    ledger.mark(true, { turn: "t1" });
    expect([ledger.output(), ledger.ended(), ledger.prompt()]).toEqual(["answer to two", false, "two"]);
    ledger.mark(true, { turn: "t2" });
    expect(ledger.ended()).toBe(true);
  });

  test("by order: the latest turn begun at or before the line; parts joined in their order", () => {
    const ledger = createTurnLedger();
    ledger.begin({ id: "p1", order: 10, prompt: "one" });
    ledger.text("b", "second part", { order: 30 });
    ledger.text("a", "first part", { order: 25 });
    ledger.begin({ id: "p2", order: 20, prompt: "two" }); // read last, began before both parts
    ledger.text("old", "one's answer", { order: 15 });
    expect([ledger.output(), ledger.prompt()]).toEqual(["first part\nsecond part", "two"]);
    // The latest mark by order decides: a late rewrite of an earlier round does not reopen it.
    ledger.mark(true, { order: 31 });
    ledger.mark(false, { order: 26 });
    expect(ledger.ended()).toBe(true);
    // A key written again keeps its place and takes its new text.
    ledger.text("a", "first part, rewritten", { order: 99 });
    expect(ledger.output()).toBe("first part, rewritten\nsecond part");
  });

  test("a prompt read out of order does not become the latest; an equal order goes by arrival", () => {
    const ledger = createTurnLedger();
    ledger.begin({ id: "p2", order: 20, prompt: "two" });
    ledger.begin({ id: "p1", order: 10, prompt: "one" });
    expect(ledger.prompt()).toBe("two");
    ledger.text("x", "before three", { order: 30 });
    ledger.begin({ id: "p3", order: 30, prompt: "three" });
    ledger.text("y", "three's", { order: 30 });
    expect(ledger.output()).toBe("three's");
  });

  test("neither id nor order: the line is the turn the file has reached (file order)", () => {
    const ledger = createTurnLedger();
    ledger.text("0", "before any prompt", {});
    expect(ledger.output()).toBe("before any prompt");
    ledger.begin({ id: "p1", order: null, prompt: "one" });
    ledger.text("1", "one's", {});
    ledger.mark(true, {});
    expect([ledger.output(), ledger.ended()]).toEqual(["one's", true]);
    ledger.begin({ id: "p2", order: null, prompt: "two" });
    expect([ledger.output(), ledger.ended()]).toEqual(["", false]);
  });
});
