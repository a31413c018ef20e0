import { realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { AgError } from "../shared/errors.ts";

export type TenantWorkdirs = Record<string, { root: string; allowedPaths?: string[] }>;

export interface TenantPolicy {
  /** Throws TENANT_WORKDIR_DENIED unless `tenantId` may run agents in `workDir`. */
  check(tenantId: string | null, workDir: string): void;
  /**
   * The folder a process is about to start in: `workDir` resolved now (every link followed), checked
   * as `check` does on that very path, and answered as it, to be the process's cwd. A folder
   * swapped for a link since an earlier check (of create, or of the launch before) is judged by
   * where it leads now. INVALID_WORKDIR when it is no longer a directory (after the tenant check:
   * outside the tenant's root, whether a path exists is none of its business).
   */
  launchDir(tenantId: string | null, workDir: string): string;
}

/**
 * SPEC's table: no tenant (the master token, a key without one) and a tenant without config are
 * unrestricted; otherwise the workDir must be at or under the root, and under one of the allowed
 * paths when there are any. Both sides are compared as real paths: `..` resolved and symlinks
 * followed, so a link inside the root that points outside is outside, and `/root2` is not under
 * `/root` (whole path segments are compared, never string prefixes).
 */
export function createTenantPolicy(workdirs: TenantWorkdirs): TenantPolicy {
  /** Judges `dir`, a real path; `given` is what the caller named (for the message). */
  function judge(tenantId: string | null, dir: string, given: string): void {
    if (tenantId === null) return;
    const rule = workdirs[tenantId];
    if (!rule) return;
    const root = realPath(rule.root);
    const areas = rule.allowedPaths?.length
      ? rule.allowedPaths.map((p) => realPath(resolve(root, p)))
      : [root];
    // An allowed path that escapes the root (`../x`, or a link out) grants nothing.
    if (areas.some((area) => isWithin(area, root) && isWithin(dir, area))) return;
    const where = rule.allowedPaths?.length ? "its allowed paths" : "its root";
    // Where a link leads is not said: outside the root, that is none of the tenant's business.
    throw new AgError("TENANT_WORKDIR_DENIED", `workDir ${given} is outside ${where} for tenant ${tenantId}`);
  }

  return {
    check: (tenantId, workDir) => judge(tenantId, realPath(workDir), workDir),
    launchDir(tenantId, workDir) {
      const dir = realPath(workDir);
      judge(tenantId, dir, workDir);
      if (!isDirectory(dir))
        throw new AgError("INVALID_WORKDIR", `workDir is no longer a directory: ${workDir}`);
      return dir;
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `child` is `parent` or below it, by whole segments. */
export function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The path with `..` resolved and every symlink followed. A part that does not exist yet is
 * kept as written under its nearest existing (and resolved) ancestor.
 */
export function realPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(realPath(parent), basename(absolute));
  }
}
