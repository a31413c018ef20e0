import { existsSync, statSync } from "node:fs";
import { join, normalize, sep } from "node:path";
import { Elysia } from "elysia";
import { AgError } from "../shared/errors.ts";

/** SPEC's dashboard policy; the registry origin lets the page check for a newer release. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self' ws: wss: https://registry.npmjs.org",
  "frame-ancestors 'none'",
  "frame-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");

export const DASHBOARD_HEADERS: Record<string, string> = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
  "cache-control": "no-cache",
};

/**
 * Where public/ lives: embedded in the compiled binary (build.ts passes it as an asset, found
 * under the bundle's virtual root), or on disk next to src/ when run from source.
 */
export function defaultDashboardRoot(): string {
  const embedded = join(import.meta.dir, "public");
  if (import.meta.dir.includes("$bunfs") || import.meta.dir.includes("~BUN")) return embedded;
  return join(import.meta.dir, "..", "..", "public");
}

/**
 * Serves the dashboard under /dashboard/. Paths are resolved under `root` and anything that
 * escapes it is a 404, as is a missing file; every answer carries the CSP.
 */
export function dashboardRoutes(root: string) {
  const base = normalize(root) + sep;
  return new Elysia({ name: "dashboard" }).get(
    "/dashboard/*",
    ({ params, request, redirect }) => {
      // The router treats /dashboard and /dashboard/ alike; relative asset URLs need the slash.
      if (new URL(request.url).pathname === "/dashboard") return redirect("/dashboard/", 308);
      const wanted = params["*"] === "" ? "index.html" : decodeURIComponent(params["*"]);
      const path = normalize(join(base, wanted));
      if (!path.startsWith(base) || !isFile(path)) {
        throw new AgError("NOT_FOUND", `no dashboard file ${wanted}`);
      }
      return new Response(Bun.file(path), { headers: DASHBOARD_HEADERS });
    },
    { detail: { hide: true } },
  );
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}
