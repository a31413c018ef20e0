import { existsSync, statSync } from "node:fs";
import { join, normalize, sep } from "node:path";
import { Elysia } from "elysia";
import { AgError } from "../shared/errors.ts";
import { isCompiled } from "../shared/self.ts";

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
 * Where the built dashboard lives: embedded in the compiled binary (build.ts passes it as an
 * asset, found under the bundle's virtual root), or in dist/public when run from source (built
 * by build.ts or `bun run scripts/dashboard.ts`; public/ holds its sources).
 */
export function defaultDashboardRoot(): string {
  return isCompiled() ? join(import.meta.dir, "public") : join(import.meta.dir, "..", "..", "dist", "public");
}

/**
 * Serves the dashboard under /dashboard/. Paths are resolved under `root` and anything that
 * escapes it is a 404, as is a missing file; every answer carries the CSP.
 */
export function dashboardRoutes(root: string) {
  const base = normalize(root) + sep;
  // The file comes from the URL itself, not from route params: the router may hand /dashboard and
  // /dashboard/ to either route, and the minified binary does not always parse params for us.
  const serve = ({ request }: { request: Request }) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/dashboard")
      return new Response(null, { status: 308, headers: { location: "/dashboard/" } });
    const rest = pathname.slice("/dashboard/".length);
    const wanted = rest === "" ? "index.html" : safeDecode(rest);
    const path = normalize(join(base, wanted));
    if (!path.startsWith(base) || !isFile(path)) {
      throw new AgError("NOT_FOUND", `no dashboard file ${wanted}`);
    }
    return new Response(Bun.file(path), { headers: DASHBOARD_HEADERS });
  };
  return new Elysia({ name: "dashboard" })
    .get("/dashboard", serve, { detail: { hide: true } })
    .get("/dashboard/*", serve, { detail: { hide: true } });
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw new AgError("NOT_FOUND", `no dashboard file ${path}`);
  }
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}
