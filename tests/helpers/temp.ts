import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { atRunEnd } from "./cleanup.ts";

/** A fresh directory, removed when the test file ends. */
export function tempDir(prefix = "ag-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  atRunEnd(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
