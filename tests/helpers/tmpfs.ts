import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { atRunEnd } from "./cleanup.ts";

/** A small tmpfs of its own, to fill to 100 % and free again. */
export interface SmallDisk {
  readonly dir: string;
  /** Writes a filler file until the file system has no block left. */
  fill(): void;
  /** Removes the filler. */
  free(): void;
  freeBytes(): number;
  unmount(): void;
}

/**
 * Mounts a tmpfs of `size` (e.g. "2m") on a fresh directory; it is unmounted by `unmount()` and
 * again at the end of the run (a failed test leaves no mount behind). Needs root (CI runs as
 * root): without it this throws, saying why, so the test fails rather than being skipped.
 */
export function mountSmallDisk(size: string): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), "ag-small-disk-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], {
    stderr: "pipe",
  });
  if (mounted.exitCode !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `cannot mount a ${size} tmpfs on ${dir} (${mounted.stderr.toString().trim() || `exit ${mounted.exitCode}`}): the storage-fault tests need root (uid ${process.getuid?.()}) and mount(8); CI runs them as root`,
    );
  }
  let done = false;
  const filler = join(dir, "filler");
  const disk: SmallDisk = {
    dir,
    fill() {
      // dd stops with "No space left on device": that is the point.
      Bun.spawnSync(["dd", "if=/dev/zero", `of=${filler}`, "bs=4k"], { stderr: "ignore" });
      if (disk.freeBytes() !== 0) throw new Error(`${dir} still has ${disk.freeBytes()} bytes free`);
    },
    free() {
      rmSync(filler, { force: true });
    },
    freeBytes() {
      const stats = statfsSync(dir);
      return Number(stats.bavail) * Number(stats.bsize);
    },
    unmount() {
      if (done) return;
      done = true;
      Bun.spawnSync(["umount", "-l", dir], { stderr: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  atRunEnd(() => disk.unmount());
  return disk;
}
