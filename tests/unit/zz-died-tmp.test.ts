import { test, expect } from "bun:test";
import { createControlTmux } from "/work/main/src/tmux/control.ts";
import { shellProgram, killTmuxServer } from "/work/main/tests/helpers/tmux.ts";
import { tempDir } from "/work/main/tests/helpers/temp.ts";
import { nextEvent } from "/work/main/tests/contract/tmux.contract.ts";
import { tmpdir } from "node:os";
test("died loop", async () => {
  const slow: string[] = [];
  for (let i = 0; i < 100; i++) {
    const socket = `ag-test-died-${process.pid}-${i}`;
    const notes: string[] = [];
    const t = createControlTmux({ socket, session: "ag-test", logger: { debug: (m: unknown) => notes.push(String(m)), warn: () => {}, error: () => {} } });
    const t0 = performance.now();
    await t.start();
    const program = shellProgram(tempDir());
    const pane = await t.newWindow({ tag: "x", name: "a", cwd: tmpdir(), command: program.command });
    const t1 = performance.now();
    await program.ready(pane.paneId);
    const t2 = performance.now();
    const died = nextEvent(t, (e) => e.type === "pane-died", 8000);
    await program.exit(pane.paneId, 3);
    const t3 = performance.now();
    let ok = "ok";
    await died.catch((e) => { ok = String(e); });
    const t4 = performance.now();
    if (t4 - t0 > 2500 || ok !== "ok") slow.push(`${i}: start+new ${(t1-t0).toFixed(0)} ready ${(t2-t1).toFixed(0)} exit ${(t3-t2).toFixed(0)} died ${(t4-t3).toFixed(0)} ${ok}`);
    await t.close();
    killTmuxServer(socket);
  }
  console.log(slow.join("\n") || "all fast");
}, 600000);
