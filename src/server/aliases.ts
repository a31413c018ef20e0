/**
 * SPEC's unversioned aliases, kept for old clients: each is served by its /v1 route. The
 * rewrite happens before routing, so an alias can never drift from the route it stands for.
 */
const ALIASES: ReadonlyArray<readonly [method: string, pattern: string]> = [
  ["POST", "/sessions"],
  ["GET", "/sessions/:id/read"],
  ["POST", "/sessions/:id/send"],
  ["POST", "/sessions/:id/interrupt"],
  ["DELETE", "/sessions/:id"],
  ["POST", "/sessions/:id/spawn"],
  ["POST", "/sessions/:id/fork"],
  ["PUT", "/sessions/:id/permissions"],
  ["PUT", "/sessions/:id/permission-profile"],
];

const COMPILED = ALIASES.map(([method, pattern]) => ({
  method,
  segments: pattern.split("/").slice(1),
}));

/** The /v1 path an unversioned request stands for, or null when it is not an alias. */
export function aliasTarget(method: string, pathname: string): string | null {
  const segments = pathname.split("/").slice(1);
  const hit = COMPILED.some(
    (alias) =>
      alias.method === method &&
      alias.segments.length === segments.length &&
      alias.segments.every((s, i) => (s.startsWith(":") ? segments[i] !== "" : s === segments[i])),
  );
  return hit ? `/v1${pathname}` : null;
}

export function rewriteAlias(request: Request): Request {
  if (!request.url.includes("/sessions")) return request;
  const url = new URL(request.url);
  const target = aliasTarget(request.method, url.pathname);
  if (!target) return request;
  url.pathname = target;
  return new Request(url, request);
}

export function listAliases(): ReadonlyArray<readonly [string, string]> {
  return ALIASES;
}
