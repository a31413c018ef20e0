import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readProcStat } from "../../src/store/instance.ts";
import { agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import { killToZombie, spawnZombie } from "../helpers/zombie.ts";

test("an ag killed with SIGKILL and not yet reaped (a zombie) does not block a restart", async () => {
  const binary = await compiledBinary();
  const env = agEnv();
  const first = await spawnZombie([binary, "--port", "0", "--host", "127.0.0.1"], env);
  try {
    const lockFile = join(env.SVC_STATE_DIR!, "server.json");
    for (
      let i = 0;
      i < 200 && !(existsSync(lockFile) && readFileSync(lockFile, "utf8").includes('"port"'));
      i++
    ) {
      await Bun.sleep(50);
    }
    expect(JSON.parse(readFileSync(lockFile, "utf8")).pid).toBe(first.pid);
    await killToZombie(first.pid);
    expect(readProcStat(first.pid)?.state).toBe("Z");
    const second = await startAg(binary, ["--port", "0", "--host", "127.0.0.1"], { env });
    expect((await fetch(`${second.url}/v1/health`)).status).toBe(200);
    expect(JSON.parse(readFileSync(lockFile, "utf8")).pid).toBe(second.proc.pid);
    expect(await second.stop()).toBe(0);
  } finally {
    first.cleanup();
  }
}, 60_000);
