import type { BunPlugin } from "bun";

/**
 * Elysia decides once, when its error module loads, whether it runs in production, from
 * `Bun.env.NODE_ENV` at RUN time — `define` cannot reach that read, and the binary is run with
 * whatever the user's environment holds (mostly nothing). Outside production a validation error
 * pretty-prints the rejected value with its expected shape: a 60 KB body of nested arrays cost
 * 20 s and 2.4 GB (issue 28). The binary fixes the decision at build time instead.
 */
const DECISION = 'isProduction = (env?.NODE_ENV ?? env?.ENV) === "production"';

/** Elysia's error module with its mode fixed to production; throws if the decision moved. */
export function elysiaInProduction(source: string): string {
  if (!source.includes(DECISION)) {
    throw new Error(
      "elysia/dist/error.mjs no longer decides its mode as build.ts expects: update scripts/production-mode.ts",
    );
  }
  return source.replace(DECISION, "isProduction = true");
}

export const productionMode: BunPlugin = {
  name: "elysia-production-mode",
  setup(build) {
    build.onLoad({ filter: /[\\/]elysia[\\/]dist[\\/]error\.mjs$/ }, async ({ path }) => ({
      contents: elysiaInProduction(await Bun.file(path).text()),
      loader: "js",
    }));
  },
};
