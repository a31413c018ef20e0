import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { Place } from "./place.ts";
import { folderSpec, must } from "./snapshot.ts";

/**
 * Puts the folder back as the commit `target` recorded it, given `present`, a snapshot of it as
 * it is now (taken just before): files the present has and the target has not are removed,
 * files the target has that differ or are missing are written. What neither snapshot holds —
 * ignored files, files over the size bound, anything outside the folder — is never touched, and
 * neither are HEAD, the branch or the user's index: only the session's own index is read into.
 */
export async function restore(place: Place, target: string, present: string): Promise<number> {
  if (target === present) return 0;
  const spec = ["--", folderSpec(place)];
  const names = (filter: string) =>
    must(place, [
      "diff-tree",
      "-r",
      "-z",
      "--no-renames",
      "--name-only",
      `--diff-filter=${filter}`,
      target,
      present,
      ...spec,
    ]);
  // From the target to the present: added since (remove), deleted, modified or retyped (write).
  const [added, changed] = await Promise.all([names("A"), names("DMT")]);
  const removals = added.split("\0").filter(Boolean);
  const writes = changed.split("\0").filter(Boolean);
  for (const path of removals) rmSync(join(place.workTree, path), { force: true });
  removeEmptyFolders(place, removals);
  await must(place, ["read-tree", target]);
  if (writes.length > 0)
    await must(place, ["checkout-index", "-f", "-z", "--stdin"], `${writes.join("\0")}\0`);
  return removals.length + writes.length;
}

/** Folders left empty by the removals, up to (not including) the folder itself. */
function removeEmptyFolders(place: Place, removed: readonly string[]): void {
  const top = join(place.workTree, place.prefix);
  const folders = new Set(removed.map((path) => dirname(join(place.workTree, path))));
  const deepestFirst = [...folders].sort((a, b) => b.length - a.length);
  for (let folder of deepestFirst) {
    while (relative(top, folder) !== "" && !relative(top, folder).startsWith("..")) {
      try {
        if (readdirSync(folder).length > 0) break;
        rmdirSync(folder);
      } catch {
        break;
      }
      folder = dirname(folder);
    }
  }
}
