import { type ArgsDef, type CommandDef, renderUsage, runCommand } from "citty";
import { AgError } from "../shared/errors.ts";
import { VERSION } from "../version.ts";
import { colourEnabled, printError, printLine } from "./output.ts";

type AnyCommand = CommandDef<ArgsDef>;

/** Subcommands load lazily: `ag status` never pays for the server's imports. */
const COMMANDS: Record<string, { description: string; hidden?: boolean; load: () => Promise<AnyCommand> }> = {
  hook: {
    description: "Forward an agent hook payload (used by the agents' settings)",
    hidden: true,
    load: () => import("./commands/hook.ts").then((m) => m.default as AnyCommand),
  },
  init: {
    description: "Create .svc/config.yaml; --from-template writes starter agent files",
    load: () => import("./commands/init.ts").then((m) => m.default as AnyCommand),
  },
  doctor: {
    description: "Check starter files, tmux, the agent CLI, the config and the server",
    load: () => import("./commands/doctor.ts").then((m) => m.default as AnyCommand),
  },
  auth: {
    description: "Move clientAuthToken from .svc/config.yaml to the token file: ag auth migrate",
    load: () => import("./commands/auth.ts").then((m) => m.default as AnyCommand),
  },
  channels: {
    description: "Channel health, and dead letters: list, retry or clear them",
    load: () => import("./commands/channels.ts").then((m) => m.default as AnyCommand),
  },
  status: {
    description: "Version, status, uptime, port and session counts of the running server",
    load: () => import("./commands/status.ts").then((m) => m.default as AnyCommand),
  },
  run: {
    description: "Start a server if none runs, create a session with the prompt, stream its answer",
    load: () => import("./commands/run.ts").then((m) => m.default as AnyCommand),
  },
  create: {
    description: "Create a session with a first prompt; waits until the agent has it",
    load: () => import("./commands/create.ts").then((m) => m.default as AnyCommand),
  },
  list: {
    description: "List sessions (--status to filter)",
    load: () => import("./commands/list.ts").then((m) => m.default as AnyCommand),
  },
  read: {
    description: "A session's messages, a page at a time (page 1 = newest)",
    load: () => import("./commands/read.ts").then((m) => m.default as AnyCommand),
  },
  tail: {
    description: "Follow a session's events until Ctrl+C or the session ends",
    load: () => import("./commands/tail.ts").then((m) => m.default as AnyCommand),
  },
  kill: {
    description: "Kill a session",
    load: () => import("./commands/kill.ts").then((m) => m.default as AnyCommand),
  },
  mcp: {
    description: "Start the MCP server (stdio) for the running ag server",
    load: () => import("./commands/mcp.ts").then((m) => m.default as AnyCommand),
  },
};

const loadServe = () => import("./commands/serve.ts").then((m) => m.default as AnyCommand);

/** Flags that take a value, so their value is not mistaken for a command name. */
const VALUE_FLAGS = new Set([
  "--port",
  "--host",
  "--config",
  "--cwd",
  "--status",
  "--page",
  "--limit",
  "--url",
  "--secret-file",
  "--name",
  "--from-template",
]);

export async function runCli(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    const index = commandIndex(argv);
    const name = index === -1 ? undefined : argv[index];
    if (name !== undefined && !(name in COMMANDS)) {
      // `ag --prot 9100`: the typo, not its value, is what to report.
      rejectUnknownFlags(argv.slice(0, index), (await loadServe()).args as ArgsDef);
      throw new AgError("USAGE_ERROR", `unknown command "${name}" (see ag --help)`);
    }
    const command = name ? await COMMANDS[name]!.load() : await loadServe();
    const rest = index === -1 ? argv : [...argv.slice(0, index), ...argv.slice(index + 1)];
    if (rest.includes("--help") || rest.includes("-h")) {
      printLine(await usage(command, name));
      return 0;
    }
    if (rest.includes("--version") || rest.includes("-v")) {
      printLine(VERSION);
      return 0;
    }
    rejectUnknownFlags(rest, command.args as ArgsDef);
    await runCommand(command, { rawArgs: rest });
    return 0;
  } catch (error) {
    printError(error, debug);
    return 1;
  }
}

function commandIndex(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return -1;
    if (arg.startsWith("-")) {
      if (VALUE_FLAGS.has(arg)) i++;
      continue;
    }
    return i;
  }
  return -1;
}

function rejectUnknownFlags(args: string[], defs: ArgsDef): void {
  const known = new Set<string>(["help", "h", "version", "v"]);
  for (const [key, def] of Object.entries(defs)) {
    known.add(key);
    known.add(key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
    const aliases = "alias" in def ? def.alias : undefined;
    for (const alias of [aliases ?? []].flat()) known.add(alias);
  }
  for (const arg of args) {
    if (arg === "--") break;
    if (!arg.startsWith("-") || /^-\d/.test(arg)) continue;
    const flag = arg.replace(/^--?(no-)?/, "").split("=")[0]!;
    if (!known.has(flag))
      throw new AgError("USAGE_ERROR", `unknown option ${arg.split("=")[0]} (see ag --help)`);
  }
}

async function usage(command: AnyCommand, name: string | undefined): Promise<string> {
  const root: AnyCommand = {
    meta: { name: "ag", version: VERSION, description: "Coding-agent session orchestrator" },
  };
  let text = await renderUsage(command, name ? root : undefined);
  if (!name) {
    const shown = Object.entries(COMMANDS).filter(([, c]) => !c.hidden);
    const width = Math.max(...shown.map(([n]) => n.length));
    const lines = shown.map(([n, c]) => `  ${n.padEnd(width)}  ${c.description}`);
    text += `\n\nCOMMANDS\n\n  ${"(none)".padEnd(width)}  Start the server\n${lines.join("\n")}\n\nUse ag <command> --help for more about a command.`;
  }
  // citty pads every option line to the widest description: trailing blanks are only noise.
  const shown = colourEnabled() ? text : stripAnsi(text);
  return shown
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n");
}

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what is removed
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}
