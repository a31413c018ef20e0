import { describe, expect, test } from "bun:test";
import { countsOf, isObject, num, parseJsonLine, str } from "../../src/agents/json-fields.ts";

describe("reading the agents' JSON", () => {
  test("a line that is not JSON reads as undefined, never a throw", () => {
    expect(parseJsonLine('{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonLine('{"a":')).toBeUndefined();
  });

  test("fields of the wrong type read as absent", () => {
    expect(str("x")).toBe("x");
    expect(str(1)).toBeNull();
    expect(num(3)).toBe(3);
    expect(num(Number.NaN)).toBe(0);
    expect(num("3")).toBe(0);
    expect(isObject([])).toBe(false);
    expect(isObject({})).toBe(true);
  });

  test("countsOf reads counts by their own names or mapped ones; not an object is null", () => {
    expect(countsOf({ input: 2, output: "x" }, ["input", "output"])).toEqual({ input: 2, output: 0 });
    expect(countsOf({ input_tokens: 5 }, { input: "input_tokens", cacheRead: "cache_read" })).toEqual({
      input: 5,
      cacheRead: 0,
    });
    expect(countsOf([1, 2], ["input"])).toBeNull();
    expect(countsOf(null, ["input"])).toBeNull();
  });
});
