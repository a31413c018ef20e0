import { describe, expect, test } from "bun:test";
import { createLogger } from "../../src/shared/log.ts";
import { createRuns } from "../../src/shared/runs.ts";

/** What the runs log, as JSON lines. */
const logged: string[] = [];
const logger = createLogger({
  level: "info",
  json: true,
  stream: { write: (l: string) => logged.push(l) } as never,
});

describe("background runs", () => {
  test("a run is tracked until it ends, then forgotten; onDone runs once it is over", async () => {
    const runs = createRuns<string>("pipeline", logger);
    let finish: (value: string) => void = () => {};
    let done = 0;
    runs.launch("p1", new Promise<string>((resolve) => (finish = resolve)), "as saved", () => done++);
    expect(runs.has("p1")).toBe(true);
    finish("completed");
    expect(await runs.get("p1")).toBe("completed");
    expect(runs.has("p1")).toBe(false);
    expect(done).toBe(1);
  });

  test("an unexpected failure is logged with the record's name and answers the record as it was", async () => {
    logged.length = 0;
    const runs = createRuns<string>("consensus", logger);
    runs.launch("c1", Promise.reject(new Error("boom")), "as saved");
    expect(await runs.get("c1")).toBe("as saved");
    expect(runs.has("c1")).toBe(false);
    expect(logged.join("")).toContain("consensus c1 stopped unexpectedly");
  });

  test("clear forgets every run", () => {
    const runs = createRuns<string>("pipeline", logger);
    runs.launch("p1", new Promise<string>(() => {}), "as saved");
    runs.clear();
    expect(runs.get("p1")).toBeUndefined();
  });
});
