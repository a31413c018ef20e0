import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DOC_PATH, renderEventPayloads, withPayloads } from "../../scripts/events-doc.ts";
import { createEventBus } from "../../src/events/bus.ts";
import {
  EVENT_NAMES,
  EVENT_PAYLOADS,
  isEventName,
  NEEDS_HUMAN_EVENTS,
  STATUS_EVENT_NAMES,
} from "../../src/events/names.ts";
import { catalogMismatch } from "../helpers/catalog.ts";
import { SAMPLE_PAYLOADS } from "../helpers/events.ts";

const CATALOG = join(import.meta.dir, "..", "..", "src", "events", "names.ts");

describe("the event catalog", () => {
  test("names every event once, in the order SSE and the dashboard list them", () => {
    expect(new Set(EVENT_NAMES).size).toBe(EVENT_NAMES.length);
    expect(EVENT_NAMES.slice(0, 3)).toEqual(["session.created", "session.working", "session.idle"]);
    expect(EVENT_NAMES.at(-1)).toBe("swarm.teammate_finished");
    expect(isEventName("status.stall")).toBe(true);
    expect(isEventName("status.stalled")).toBe(false);
    expect(isEventName("toString")).toBe(false);
  });

  test("a sample of every payload matches its schema, and a wrong or extra field does not", () => {
    for (const name of EVENT_NAMES) expect(catalogMismatch(name, SAMPLE_PAYLOADS[name])).toBeNull();
    expect(catalogMismatch("session.ended", SAMPLE_PAYLOADS["session.idle"])).toContain("meta.reason");
    expect(catalogMismatch("message.user", { ...SAMPLE_PAYLOADS["message.user"], text: "x" })).toContain(
      "meta.text",
    );
    expect(catalogMismatch("status.stalled", {})).toBe("status.stalled: not in the catalog");
  });

  test("status events are those whose payload has the status fields", () => {
    for (const name of STATUS_EVENT_NAMES) {
      expect(Object.keys(EVENT_PAYLOADS[name].properties)).toEqual(
        expect.arrayContaining(["status", "previous", "pendingPermission", "source"]),
      );
    }
    expect(STATUS_EVENT_NAMES).not.toContain("status.permission_timeout");
    expect(STATUS_EVENT_NAMES).not.toContain("message.user");
    expect(NEEDS_HUMAN_EVENTS.every((name) => EVENT_NAMES.includes(name))).toBe(true);
  });

  test("publishing checks meta against the catalog at compile time", () => {
    const bus = createEventBus();
    const session = { id: "s", name: "s", workDir: "/w" };
    // The lines below must not compile (tsc fails on an unused @ts-expect-error): they run only here.
    // @ts-expect-error session.ended needs its reason
    bus.publish({ event: "session.ended", session, detail: "", meta: SAMPLE_PAYLOADS["session.idle"] });
    // @ts-expect-error a message's meta is not a state change
    bus.publish({ event: "message.user", session, detail: "", meta: SAMPLE_PAYLOADS["status.idle"] });
    // @ts-expect-error no such event
    bus.publish({ event: "status.stalled", session, detail: "", meta: {} });
    const ended = bus.publish({
      event: "session.ended",
      session,
      detail: "",
      meta: SAMPLE_PAYLOADS["session.ended"],
    });
    // And what a subscriber reads is typed by the same catalog.
    const reason: "normal" | "failed" | "killed" | "idle_timeout" = ended.meta.reason;
    expect(reason).toBe("killed");
  });

  test("a browser can import it: nothing but TypeBox, and it bundles for the browser", async () => {
    const scan = (path: string) =>
      new Bun.Transpiler({ loader: "ts" }).scanImports(readFileSync(path, "utf8")).map((i) => i.path);
    expect([...new Set(scan(CATALOG))]).toEqual(["@sinclair/typebox"]);
    const built = await Bun.build({ entrypoints: [CATALOG], target: "browser" });
    expect(built.success).toBe(true);
    const bundle = await built.outputs[0]!.text();
    expect(bundle).not.toMatch(/from\s*["'](node|bun):/);
    expect(bundle).toContain("swarm.teammate_finished");
  });
});

describe("docs/events.md", () => {
  const doc = readFileSync(DOC_PATH, "utf8");

  test("its payload reference is the one scripts/events-doc.ts generates from the catalog", () => {
    // When this fails: bun scripts/events-doc.ts
    expect(withPayloads(doc)).toBe(doc);
  });

  test("names every event and every payload field of the catalog", () => {
    const reference = renderEventPayloads();
    for (const name of EVENT_NAMES) {
      expect(doc).toContain(`\`${name}\``);
      for (const field of Object.keys(EVENT_PAYLOADS[name].properties))
        expect(reference).toMatch(new RegExp(`\\| \`${field}\\??\` \\|`));
    }
  });
});
