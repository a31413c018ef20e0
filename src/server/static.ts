import { existsSync, readFileSync, statSync } from "node:fs";
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
};

/** The encodings the build writes beside each file, by suffix (scripts/dashboard.ts), best first. */
export const PRECOMPRESSED = { br: ".br", gzip: ".gz" } as const;

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
 *
 * The build (scripts/dashboard.ts) names every file but the page by its content and writes a
 * `.br` and a `.gz` beside each: a file whose name carries a hash is kept by the browser for good
 * (`immutable`), the page is revalidated by its ETag (a 304 of a few hundred bytes), and each is
 * sent precompressed when the request's Accept-Encoding allows it.
 */
export function dashboardRoutes(root: string) {
  const base = normalize(root) + sep;
  const tags = createEtags();
  // The file comes from the URL itself, not from route params: the router may hand /dashboard and
  // /dashboard/ to either route, and the minified binary does not always parse params for us.
  const serve = ({ request }: { request: Request }) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/dashboard")
      return new Response(null, { status: 308, headers: { location: "/dashboard/" } });
    const rest = pathname.slice("/dashboard/".length);
    const wanted = rest === "" ? "index.html" : safeDecode(rest);
    const path = normalize(join(base, wanted));
    // The precompressed copies are served in place of their file, never asked for by name.
    if (!path.startsWith(base) || !isFile(path) || isPrecompressed(path)) {
      throw new AgError("NOT_FOUND", `no dashboard file ${wanted}`);
    }
    const encoding = chooseEncoding(request.headers.get("accept-encoding"), path);
    const sent = encoding ? path + PRECOMPRESSED[encoding] : path;
    const etag = `"${tags.of(path)}${encoding ? `-${encoding}` : ""}"`;
    const headers: Record<string, string> = {
      ...DASHBOARD_HEADERS,
      "cache-control": HASHED_NAME.test(path) ? IMMUTABLE : REVALIDATE,
      etag,
      vary: "accept-encoding",
    };
    if (matches(request.headers.get("if-none-match"), etag))
      return new Response(null, { status: 304, headers });
    headers["content-type"] = Bun.file(path).type;
    if (encoding) headers["content-encoding"] = encoding;
    return new Response(Bun.file(sent), { headers });
  };
  return new Elysia({ name: "dashboard" })
    .get("/dashboard", serve, { detail: { hide: true } })
    .get("/dashboard/*", serve, { detail: { hide: true } });
}

/** A file the build named by its content (`app-1a2b3c4d.js`): it never changes under that name. */
const HASHED_NAME = /-[0-9a-z]{8}\.[0-9a-z]+$/;
const IMMUTABLE = "public, max-age=31536000, immutable";
/** The page: kept, but asked about (If-None-Match) before each use. */
const REVALIDATE = "no-cache";

const isPrecompressed = (path: string) =>
  Object.values(PRECOMPRESSED).some((suffix) => path.endsWith(suffix));

/**
 * The best encoding the request accepts (`br` over `gzip`; `q=0` refuses one, `*` stands for the
 * ones not named) of which the build wrote a copy; null: the file as it is.
 */
export function chooseEncoding(header: string | null, path: string): keyof typeof PRECOMPRESSED | null {
  if (!header) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const accepted = (name: string) => (weights.get(name) ?? weights.get("*") ?? 0) > 0;
  for (const encoding of Object.keys(PRECOMPRESSED) as (keyof typeof PRECOMPRESSED)[]) {
    if (accepted(encoding) && isFile(path + PRECOMPRESSED[encoding])) return encoding;
  }
  return null;
}

/** Whether If-None-Match names this ETag (or is `*`); a weak validator compares equal too. */
function matches(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const value = tag.trim().replace(/^W\//, "");
    return value === "*" || value === etag;
  });
}

/** Each file's content hash, computed once per version of the file (its size and mtime). */
function createEtags() {
  const known = new Map<string, { version: string; tag: string }>();
  return {
    of(path: string): string {
      const stat = statSync(path);
      const version = `${stat.size}:${stat.mtimeMs}`;
      const seen = known.get(path);
      if (seen?.version === version) return seen.tag;
      const tag = new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("base64url").slice(0, 22);
      known.set(path, { version, tag });
      return tag;
    },
  };
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
