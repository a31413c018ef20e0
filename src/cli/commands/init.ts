import { relative } from "node:path";
import { defineCommand } from "citty";
import { STARTER_TEMPLATES } from "../../agents/claude/starter-templates.ts";
import { initProject, type WriteAction } from "../../init/project.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { printFields, printLine } from "../output.ts";

const SAID: Record<WriteAction, string> = {
  created: "created",
  overwritten: "overwrote",
  kept: "kept existing",
};

export default defineCommand({
  meta: { name: "init", description: "Create .svc/config.yaml, and starter agent files from a template" },
  args: {
    ...GLOBAL_ARGS,
    yes: {
      type: "boolean",
      description: "Ask nothing: an existing config is kept (use --force to replace it)",
    },
    force: { type: "boolean", alias: "f", description: "Overwrite the config and template files" },
    "list-templates": { type: "boolean", description: "List the starter templates" },
    "from-template": {
      type: "string",
      description: "Also write a starter template's files",
      valueHint: "name",
    },
  },
  async run({ args }) {
    if (args["list-templates"]) {
      printFields(STARTER_TEMPLATES.map((t) => [t.name, `${t.kind.padEnd(13)}  ${t.description}`]));
      return;
    }
    const cwd = process.cwd();
    // The y/N question needs a person at a terminal; otherwise the answer is the safe "no".
    const interactive = !args.yes && !args.force && process.stdin.isTTY === true;
    const result = await initProject({
      cwd,
      force: args.force,
      template: args["from-template"],
      confirmOverwrite: interactive
        ? (path) =>
            /^y(es)?$/i.test(prompt(`${relative(cwd, path)} exists. Overwrite it? [y/N]`)?.trim() ?? "")
        : undefined,
    });
    for (const { path, action } of [result.config, ...result.files]) {
      printLine(`${SAID[action]} ${relative(cwd, path)}`);
    }
    if (result.config.action === "kept") printLine("(the config was kept; ag init --force replaces it)");
    if (result.files.some((f) => f.action === "kept"))
      printLine("(existing files were kept; --force replaces them)");
  },
});
