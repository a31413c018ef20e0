import { VERSION } from "./version.ts";

// `ag --version` answers before anything else is loaded; every command is imported lazily.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { runCli } = await import("./cli/run.ts");
  process.exitCode = await runCli(argv);
}
