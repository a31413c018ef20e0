import { describe, expect, test } from "bun:test";
import { createShutdown } from "../../src/server/shutdown.ts";
import { createLogger } from "../../src/shared/log.ts";

function harness(drain: (graceMs: number) => Promise<boolean>, options: { hardMs?: number } = {}) {
  const events: string[] = [];
  const exited = Promise.withResolvers<number>();
  const logs: string[] = [];
  const shutdown = createShutdown({
    graceMs: 50,
    hardMs: options.hardMs ?? 200,
    drain: async (graceMs) => {
      events.push(`drain ${graceMs}`);
      return drain(graceMs);
    },
    close: () => {
      events.push("close");
    },
    exit: (code) => {
      events.push(`exit ${code}`);
      exited.resolve(code);
    },
    logger: createLogger({
      level: "info",
      json: true,
      stream: { write: (l: string) => logs.push(l) } as never,
    }),
  });
  return { shutdown, events, exited: exited.promise, logs };
}

describe("shutdown on SIGTERM/SIGINT", () => {
  test("drains, closes, exits 0", async () => {
    const h = harness(async () => true);
    void h.shutdown("SIGTERM");
    expect(await h.exited).toBe(0);
    expect(h.events).toEqual(["drain 50", "close", "exit 0"]);
  });

  test("a grace period that runs out still closes and exits 0", async () => {
    const h = harness(async () => false);
    void h.shutdown("SIGINT");
    expect(await h.exited).toBe(0);
    expect(h.logs.join("")).toContain("grace period over");
  });

  test("past the hard cap it exits 1", async () => {
    const h = harness(() => new Promise(() => {}), { hardMs: 30 });
    void h.shutdown("SIGTERM");
    expect(await h.exited).toBe(1);
    expect(h.events).not.toContain("close");
  });

  test("a second signal exits 1 at once", async () => {
    const h = harness(() => new Promise(() => {}), { hardMs: 10_000 });
    void h.shutdown("SIGINT");
    void h.shutdown("SIGINT");
    expect(await h.exited).toBe(1);
  });

  test("a failing close exits 1", async () => {
    const events: number[] = [];
    const shutdown = createShutdown({
      graceMs: 10,
      hardMs: 1000,
      drain: async () => true,
      close: () => {
        throw new Error("disk gone");
      },
      exit: (code) => events.push(code),
      logger: createLogger({ level: "silent", json: true }),
    });
    await shutdown("SIGTERM");
    expect(events).toEqual([1]);
  });
});
