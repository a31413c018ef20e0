import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { camelCase, camelize, fromColumns } from "../../src/shared/rows.ts";

describe("rows to records", () => {
  test("a snake_case column is named in camelCase; a one-word column keeps its name", () => {
    expect(camelCase("work_dir")).toBe("workDir");
    expect(camelCase("token_cache_read")).toBe("tokenCacheRead");
    expect(camelCase("id")).toBe("id");
  });

  test("fromColumns takes only the named columns of a real row, values untouched", () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (id TEXT, work_dir TEXT, ended_at TEXT, secret TEXT, n INTEGER)");
    db.run("INSERT INTO t VALUES ('a', '/w', NULL, 's', 0)");
    const row = db
      .query<{ id: string; work_dir: string; ended_at: string | null; secret: string; n: number }, []>(
        "SELECT * FROM t",
      )
      .get()!;
    expect(fromColumns(row, ["id", "work_dir", "ended_at", "n"])).toEqual({
      id: "a",
      workDir: "/w",
      endedAt: null,
      n: 0,
    });
    expect(Object.keys(camelize(row))).toEqual(["id", "workDir", "endedAt", "secret", "n"]);
    db.close();
  });
});
