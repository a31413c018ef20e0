import { expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "../helpers/temp.ts";

// npm test's preflight script run for real; its plan is tested in tests/unit/preflight.test.ts.
test("the script, with PATH an empty directory: exits 1 at once, naming the commands", () => {
  const run = Bun.spawnSync(
    [process.execPath, join(import.meta.dir, "..", "..", "scripts", "preflight.ts")],
    {
      env: { PATH: tempDir("empty-path-"), HOME: tempDir() },
      stderr: "pipe",
    },
  );
  expect(run.exitCode).toBe(1);
  const message = run.stderr.toString();
  expect(message).toContain("npm test needs tmux and chromium");
  expect(message).toContain("apt-get install -y tmux");
  expect(message).toContain("apt-get install -y chromium");
});
