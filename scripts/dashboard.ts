/**
 * Builds the dashboard: public/src/main.tsx (Preact, xterm.js) bundled for the browser into
 * `<outdir>/app.js` and `app.css`, next to public/index.html and public/style.css. No inline
 * script and nothing from a CDN: the page runs under SPEC's CSP as served.
 * `bun run scripts/dashboard.ts [outdir]` (default dist/public).
 */
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const root = join(import.meta.dir, "..");

export async function buildDashboard(outdir: string): Promise<string> {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(root, "public", "src", "main.tsx")],
    outdir,
    target: "browser",
    format: "esm",
    minify: true,
    // xterm.js, the bulk, is a chunk of its own: loaded by the session view, not the list.
    splitting: true,
    naming: { entry: "app.[ext]", chunk: "chunk-[hash].[ext]", asset: "asset-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("the dashboard did not build");
  }
  for (const file of ["index.html", "style.css"])
    copyFileSync(join(root, "public", file), join(outdir, file));
  return outdir;
}

if (import.meta.main) {
  const outdir = resolve(process.argv[2] ?? join(root, "dist", "public"));
  console.log(`built the dashboard in ${await buildDashboard(outdir)}`);
}
