import { expect, test } from "bun:test";
import { createPaneOutput } from "../../src/tmux/output.ts";

/**
 * A snapshot pauses the control client's output of a pane. If the pause's answer never comes in
 * time, tmux may still run it later: the pane must be continued anyway, or ag would hear nothing
 * more from it (its screen-based state detection included).
 */
test("a snapshot whose pause timed out still continues the pane", async () => {
  const ran: string[][] = [];
  const output = createPaneOutput({
    run: async (args) => {
      ran.push(args);
      if (args.at(-1)?.endsWith(":pause")) throw new Error("tmux command timed out");
      return [];
    },
    runTogether: (commands) => commands.map(async () => []),
    changed() {},
    logError() {},
  });
  await expect(output.snapshotPane("%3")).rejects.toThrow("timed out");
  expect(ran).toEqual([
    ["refresh-client", "-A", "%3:pause"],
    ["refresh-client", "-A", "%3:continue"],
  ]);
});
