import { describe, expect, test } from "bun:test";
import { formatCpu, formatMemory } from "../../public/src/format.ts";

const MB = 1024 * 1024;

describe("an agent's figures in the session list", () => {
  test("memory in MB up to a GB, then in GB with one decimal; a dash when not measured", () => {
    expect([0.4 * MB, 3 * MB, 312.6 * MB, 1023 * MB, 1024 * MB, 1434 * MB].map(formatMemory)).toEqual([
      "0 MB",
      "3 MB",
      "313 MB",
      "1023 MB",
      "1.0 GB",
      "1.4 GB",
    ]);
    expect(formatMemory(undefined)).toBe("–");
  });

  test("CPU as a share of one core: a decimal below 10 %, whole above (past 100 % on several cores)", () => {
    expect([0, 0.04, 4.26, 37.4, 180].map(formatCpu)).toEqual(["0%", "0.0%", "4.3%", "37%", "180%"]);
    expect([null, undefined].map(formatCpu)).toEqual(["–", "–"]);
  });
});
