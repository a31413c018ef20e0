import { relative } from "node:path";
import { defineCommand } from "citty";
import { loadConfig } from "../../config/load.ts";
import { type MigrateOutcome, migrateAuthToken } from "../../init/auth-migrate.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { printLine } from "../output.ts";

/** `ag auth migrate`: the project file's clientAuthToken → <stateDir>/auth-token. */
export default defineCommand({
  meta: { name: "auth", description: "Auth token housekeeping: ag auth migrate" },
  args: {
    ...GLOBAL_ARGS,
    verb: { type: "positional", required: false, description: "migrate" },
    force: {
      type: "boolean",
      alias: "f",
      description: "Replace an existing, different token file with the config's clientAuthToken",
    },
  },
  run({ args }) {
    if (args.verb !== "migrate") {
      throw new AgError(
        "USAGE_ERROR",
        `unknown auth command "${args.verb ?? ""}" (ag auth migrate [--force])`,
      );
    }
    const cwd = process.cwd();
    const { config } = loadConfig({ configPath: args.config });
    const result = migrateAuthToken({ cwd, stateDir: config.stateDir, force: args.force });
    const configFile = relative(cwd, result.configFile);
    const said: Record<MigrateOutcome, string> = {
      migrated: `moved clientAuthToken from ${configFile} to ${result.tokenFile} (mode 0600)`,
      "removed-empty": `removed the empty clientAuthToken from ${configFile}`,
      "already-migrated": `already migrated: the token is in ${result.tokenFile}`,
      "nothing-to-migrate": `nothing to migrate: no clientAuthToken in ${configFile}`,
    };
    printLine(said[result.outcome]);
  },
});
