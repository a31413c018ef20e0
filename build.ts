/**
 * Builds the single executable: dist/ag, plus dist/svc (the legacy name, the same program).
 * `bun run build.ts [--outdir DIR]`
 */
import { linkSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildDashboard } from "./scripts/dashboard.ts";
import { productionMode } from "./scripts/production-mode.ts";

const outdirFlag = process.argv.indexOf("--outdir");
const outdir = resolve(outdirFlag === -1 ? "dist" : process.argv[outdirFlag + 1]!);
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, "ag");

const started = performance.now();
// The dashboard first: public/ holds its sources; what the binary embeds is the built page.
const dashboard = await buildDashboard(join(outdir, "public"));
const result = await Bun.build({
  entrypoints: [join(import.meta.dir, "src/main.ts")],
  compile: {
    outfile,
    // The built dashboard is embedded whole; the server finds it under the bundle's virtual root.
    assets: [dashboard],
    // A user's .env or bunfig.toml in the directory where they run ag must not change it.
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  format: "esm",
  // Separate chunks per lazily imported command: `ag --version` loads almost nothing.
  splitting: true,
  // Not identifiers: Elysia's compiled query validators break when names are mangled (a query
  // number out of its bounds, `?limit=0` or `?limit=1e21`, went through unchecked, as a string;
  // tests/integration/numeric-bounds.test.ts checks the binary). Whitespace and syntax are safe.
  minify: { whitespace: true, syntax: true, identifiers: false },
  bytecode: true,
  sourcemap: "linked",
  // Production whatever NODE_ENV the binary meets: for code reading process.env.NODE_ENV (define),
  // and for Elysia, which reads Bun.env at run time (the plugin).
  define: { "process.env.NODE_ENV": '"production"' },
  plugins: [productionMode],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const alias = join(outdir, "svc");
rmSync(alias, { force: true });
linkSync(outfile, alias);
console.log(`built ${outfile} (+ ${alias}) in ${Math.round(performance.now() - started)} ms`);
