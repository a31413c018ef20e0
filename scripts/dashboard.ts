/**
 * Builds the dashboard: public/src/main.tsx (Preact, xterm.js) bundled for the browser into
 * `<outdir>/app-<hash>.js` and `app-<hash>.css`, public/style.css copied as `style-<hash>.css`,
 * and public/index.html naming them. No inline script and nothing from a CDN: the page runs under
 * SPEC's CSP as served. Every file but the page names its content (a hash), so the server lets
 * browsers keep it for good; each is precompressed (`.br`, `.gz` beside it) for the server to send
 * as it is (docs/dashboard.md, "Transfer and caching").
 * `bun run scripts/dashboard.ts [outdir]` (default dist/public).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { PRECOMPRESSED } from "../src/server/static.ts";

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
    naming: { entry: "app-[hash].[ext]", chunk: "chunk-[hash].[ext]", asset: "asset-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("the dashboard did not build");
  }
  const built = (ext: string) => {
    const output = result.outputs.find(
      (o) => o.kind === (ext === "js" ? "entry-point" : "asset") && o.path.endsWith(`.${ext}`),
    );
    if (!output) throw new Error(`the dashboard's build wrote no .${ext}`);
    return basename(output.path);
  };
  const style = readFileSync(join(root, "public", "style.css"));
  const styleName = `style-${contentHash(style)}.css`;
  writeFileSync(join(outdir, styleName), style);
  const names: Record<string, string> = {
    "app.js": built("js"),
    "app.css": built("css"),
    "style.css": styleName,
  };
  const html = readFileSync(join(root, "public", "index.html"), "utf8").replace(
    /(href|src)="(app\.js|app\.css|style\.css)"/g,
    (_, attribute: string, name: string) => `${attribute}="${names[name]}"`,
  );
  writeFileSync(join(outdir, "index.html"), html);
  for (const file of readdirSync(outdir)) precompress(join(outdir, file));
  return outdir;
}

/** Eight characters of the content's SHA-256, as Bun's own `[hash]` is eight characters. */
function contentHash(data: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex").slice(0, 8);
}

/** `<file>.br` and `<file>.gz` at the strongest settings: done once, at build, not per request. */
function precompress(path: string) {
  const data = readFileSync(path);
  const br = brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  const gz = gzipSync(data, { level: constants.Z_BEST_COMPRESSION });
  // A file too small to gain (a compressed empty file is larger) is only sent as it is.
  if (br.length < data.length) writeFileSync(path + PRECOMPRESSED.br, br);
  if (gz.length < data.length) writeFileSync(path + PRECOMPRESSED.gzip, gz);
}

if (import.meta.main) {
  const outdir = resolve(process.argv[2] ?? join(root, "dist", "public"));
  console.log(`built the dashboard in ${await buildDashboard(outdir)}`);
}
