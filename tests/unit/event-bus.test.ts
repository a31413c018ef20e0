import { expect, test } from "bun:test";
import { createEventBus } from "../../src/events/bus.ts";
import { sampleInput } from "../helpers/events.ts";

const session = { id: "s1", name: "s1", workDir: "/w" };

test("an event published by a subscriber waits for the one being handed out: everyone sees ids in order", () => {
  const bus = createEventBus();
  // A teammate's end is its parent's news: published from within the dispatch of session.ended.
  bus.subscribe((event) => {
    if (event.event === "session.ended") bus.publish(sampleInput("swarm.teammate_finished", { session }));
  });
  const seen: Array<[number, string]> = [];
  bus.subscribe((event) => seen.push([event.id, event.event]));
  const ended = bus.publish(sampleInput("session.ended", { session, detail: "killed" }));
  expect(seen).toEqual([
    [ended.id, "session.ended"],
    [ended.id + 1, "swarm.teammate_finished"],
  ]);
  expect(bus.since(0).map((e) => e.event)).toEqual(["session.ended", "swarm.teammate_finished"]);
});

test("a subscriber that throws is logged and the others still get the event", () => {
  const errors: string[] = [];
  const bus = createEventBus({ logger: { error: (m: string) => errors.push(m) } as never });
  bus.subscribe(() => {
    throw new Error("boom");
  });
  const seen: string[] = [];
  bus.subscribe((event) => seen.push(event.event));
  bus.publish(sampleInput("session.idle", { session }));
  bus.publish(sampleInput("session.working", { session }));
  expect(seen).toEqual(["session.idle", "session.working"]);
  expect(errors).toHaveLength(2);
});
