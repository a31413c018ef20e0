import { describe, expect, test } from "bun:test";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import { createTurnEndDetector } from "../../src/verify/turns.ts";

let nextId = 1;
const ev = (event: EventName, id = "s1", meta: Record<string, unknown> = {}): AgEvent => ({
  id: nextId++,
  event,
  timestamp: new Date(0).toISOString(),
  session: { id, name: id, workDir: `/w/${id}` },
  detail: "",
  meta,
});

/** The session ids the detector names as turn ends, one per event (null elsewhere). */
function run(events: AgEvent[]): Array<string | null> {
  const detect = createTurnEndDetector();
  return events.map(detect);
}

describe("turn ends", () => {
  test("a new session's first idle ends its boot, not a turn", () => {
    expect(run([ev("session.created"), ev("session.idle", "s1", { previous: "working" })])).toEqual([
      null,
      null,
    ]);
  });

  test("working then idle after the boot is a turn end", () => {
    const ends = run([
      ev("session.created"),
      ev("session.idle"),
      ev("message.user"),
      ev("session.working"),
      ev("status.working"),
      ev("session.idle"),
      ev("status.idle"),
    ]);
    expect(ends).toEqual([null, null, null, null, null, "s1", null]);
  });

  test("a turn that started before the first idle screen still counts", () => {
    // The prompt was submitted while the UI came up: no boot idle, the first idle ends the turn.
    expect(run([ev("session.created"), ev("message.user"), ev("session.idle")])).toEqual([null, null, "s1"]);
  });

  test("every later turn counts, whatever state came before idle", () => {
    const ends = run([
      ev("session.created"),
      ev("session.idle"),
      ev("session.working"),
      ev("permission.requested"),
      ev("session.idle", "s1", { previous: "permission_prompt" }),
      ev("session.working"),
      ev("session.stalled"),
      ev("session.idle", "s1", { previous: "stalled" }),
    ]);
    expect(ends.filter(Boolean)).toEqual(["s1", "s1"]);
  });

  test("a session adopted after a restart has no boot: its next idle is a turn end", () => {
    expect(run([ev("session.idle", "old")])).toEqual(["old"]);
  });

  test("sessions are told apart", () => {
    const ends = run([
      ev("session.created", "a"),
      ev("session.created", "b"),
      ev("session.idle", "a"),
      ev("session.working", "b"),
      ev("session.idle", "b"),
      ev("session.idle", "a"),
    ]);
    expect(ends).toEqual([null, null, null, null, "b", "a"]);
  });

  test("events without a session, and the verification event itself, are ignored", () => {
    const detect = createTurnEndDetector();
    expect(detect({ ...ev("session.idle"), session: undefined })).toBeNull();
    expect(detect(ev("verification"))).toBeNull();
  });
});
