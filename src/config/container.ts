import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * SPEC's container detection: /.dockerenv exists, or PID 1's cgroup names docker or containerd.
 * `root` is "/" in production; tests point it at a fake tree.
 */
export function isInContainer(root = "/"): boolean {
  if (existsSync(join(root, ".dockerenv"))) return true;
  try {
    return /docker|containerd/.test(readFileSync(join(root, "proc", "1", "cgroup"), "utf8"));
  } catch {
    return false;
  }
}
