import { expect, test } from "bun:test";
import { createLogger, jsonFields } from "../../src/shared/log.ts";

function capture(level: Parameters<typeof createLogger>[0]["level"], json: boolean) {
  const lines: string[] = [];
  const logger = createLogger({ level, json, stream: { write: (l: string) => lines.push(l) } as never });
  return { logger, lines };
}

test("--json-logs writes one JSON object per line", () => {
  const { logger, lines } = capture("info", true);
  logger.info("listening on", "http://x", { port: 9100 });
  logger.warn("careful\nwith newlines");
  logger.error("failed", new Error("boom"));
  expect(lines).toHaveLength(3);
  for (const line of lines) expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true);
  const [first, second, third] = lines.map((l) => JSON.parse(l));
  expect(first).toMatchObject({ level: "info", msg: "listening on http://x", port: 9100 });
  expect(Date.parse(first.time)).not.toBeNaN();
  expect(second.msg).toBe("careful\nwith newlines");
  expect(third).toMatchObject({ level: "error", msg: "failed", error: { message: "boom" } });
});

test("the level filters", () => {
  const { logger, lines } = capture("warn", true);
  logger.info("hidden");
  logger.debug("hidden");
  logger.warn("shown");
  expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["shown"]);
  const silent = capture("silent", false);
  silent.logger.error("nothing");
  expect(silent.lines).toEqual([]);
  const debug = capture("debug", true);
  debug.logger.debug("seen");
  expect(debug.lines).toHaveLength(1);
});

test("text logs: time, level, message, fields", () => {
  const { logger, lines } = capture("info", false);
  logger.info("listening", { port: 9100, host: "127.0.0.1" });
  expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}listening port=9100 host=127\.0\.0\.1\n$/);
});

test("fields for JSON logs only: merged into the record, left out of the text line", () => {
  const text = capture("info", false);
  text.logger.info("session a: idle", jsonFields({ event: "status.idle", sessionId: "a" }));
  expect(text.lines[0]).toMatch(/INFO {2}session a: idle\n$/);
  const json = capture("info", true);
  json.logger.info("session a: idle", jsonFields({ event: "status.idle", sessionId: "a" }));
  expect(JSON.parse(json.lines[0]!)).toMatchObject({
    msg: "session a: idle",
    event: "status.idle",
    sessionId: "a",
  });
});
