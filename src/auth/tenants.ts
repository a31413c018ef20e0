import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { AgError } from "../shared/errors.ts";

export type TenantWorkdirs = Record<string, { root: string; allowedPaths?: string[] }>;

export interface TenantPolicy {
  /** Throws TENANT_WORKDIR_DENIED unless `tenantId` may run agents in `workDir`. */
  check(tenantId: string | null, workDir: string): void;
}

/**
 * SPEC's table: no tenant (the master token, a key without one) and a tenant without config are
 * unrestricted; otherwise the workDir must be at or under the root, and under one of the allowed
 * paths when there are any. Both sides are compared as real paths: `..` resolved and symlinks
 * followed, so a link inside the root that points outside is outside, and `/root2` is not under
 * `/root` (whole path segments are compared, never string prefixes).
 */
export function createTenantPolicy(workdirs: TenantWorkdirs): TenantPolicy {
  return {
    check(tenantId, workDir) {
      if (tenantId === null) return;
      const rule = workdirs[tenantId];
      if (!rule) return;
      const dir = realPath(workDir);
      const root = realPath(rule.root);
      const areas = rule.allowedPaths?.length
        ? rule.allowedPaths.map((p) => realPath(resolve(root, p)))
        : [root];
      // An allowed path that escapes the root (`../x`, or a link out) grants nothing.
      if (areas.some((area) => isWithin(area, root) && isWithin(dir, area))) return;
      const where = rule.allowedPaths?.length ? "its allowed paths" : "its root";
      throw new AgError(
        "TENANT_WORKDIR_DENIED",
        `workDir ${workDir} is outside ${where} for tenant ${tenantId}`,
      );
    },
  };
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
