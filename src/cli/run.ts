import { type ArgsDef, type CommandDef, runCommand } from "citty";
import { AgError } from "../shared/errors.ts";
import { VERSION } from "../version.ts";
import { nearest, renderCommandHelp, renderRootHelp } from "./help.ts";
import { endOnClosedPipe, printError, printLine } from "./output.ts";

type AnyCommand = CommandDef<ArgsDef>;

interface CommandEntry {
  description: string;
  group: "sessions" | "server" | "setup";
  hidden?: boolean;
  load: () => Promise<AnyCommand>;
}

const command = (load: () => Promise<unknown>) => () => load() as Promise<AnyCommand>;

/** Subcommands load lazily: `ag status` never pays for the server's imports. In help order. */
const COMMANDS: Record<string, CommandEntry> = {
  run: {
    group: "sessions",
    description: "Start a server if none runs, create a session with the prompt, stream its answer",
    load: command(() => import("./commands/run.ts").then((m) => m.default)),
  },
  create: {
    group: "sessions",
    description: "Create a session with a first prompt; waits until the agent has it",
    load: command(() => import("./commands/create.ts").then((m) => m.default)),
  },
  list: {
    group: "sessions",
    description: "Running sessions, what each waits for, tokens and cost (--all: ended ones too)",
    load: command(() => import("./commands/list.ts").then((m) => m.default)),
  },
  agents: {
    group: "sessions",
    description: "The agent CLIs ag can run, whether each is installed, and what each can do",
    load: command(() => import("./commands/agents.ts").then((m) => m.default)),
  },
  send: {
    group: "sessions",
    description: 'Send a message to a session ("-" reads it from stdin)',
    load: command(() => import("./commands/send.ts").then((m) => m.default)),
  },
  approve: {
    group: "sessions",
    description: "Allow what the session asks permission for, once",
    load: command(() => import("./commands/decide.ts").then((m) => m.approve)),
  },
  reject: {
    group: "sessions",
    description: "Refuse what the session asks permission for",
    load: command(() => import("./commands/decide.ts").then((m) => m.reject)),
  },
  answer: {
    group: "sessions",
    description: "Answer the session's question: an option's number, or --text \"…\"",
    load: command(() => import("./commands/answer.ts").then((m) => m.default)),
  },
  review: {
    group: "sessions",
    description: 'Reviewers judge a session\'s work against -c "criteria"; exit 0 only on approve',
    load: command(() => import("./commands/review.ts").then((m) => m.default)),
  },
  read: {
    group: "sessions",
    description: "A session's messages, a page at a time (page 1 = newest)",
    load: command(() => import("./commands/read.ts").then((m) => m.default)),
  },
  search: {
    group: "sessions",
    description: "Search every conversation's turns; a hit is what read, open, resume and fork take",
    load: command(() => import("./commands/search.ts").then((m) => m.default)),
  },
  tail: {
    group: "sessions",
    description: "Follow what a session does, a line each, until Ctrl+C or its end",
    load: command(() => import("./commands/tail.ts").then((m) => m.default)),
  },
  attach: {
    group: "sessions",
    description: "This terminal on the session's own tmux window (--read-only to watch)",
    load: command(() => import("./commands/attach.ts").then((m) => m.default)),
  },
  interrupt: {
    group: "sessions",
    description: "Stop the session's current turn (Ctrl+C in the agent)",
    load: command(() => import("./commands/press.ts").then((m) => m.interruptCommand)),
  },
  escape: {
    group: "sessions",
    description: "Press Escape in the session",
    load: command(() => import("./commands/press.ts").then((m) => m.escapeCommand)),
  },
  open: {
    group: "sessions",
    description: "Print the dashboard's link (a session's page) and open it in a browser",
    load: command(() => import("./commands/open.ts").then((m) => m.default)),
  },
  fork: {
    group: "sessions",
    description: "A new session continuing a copy of a session's conversation",
    load: command(() => import("./commands/branch.ts").then((m) => m.forkCommand)),
  },
  resume: {
    group: "sessions",
    description: "Bring an ended session's conversation back, under its own id",
    load: command(() => import("./commands/branch.ts").then((m) => m.resumeCommand)),
  },
  diff: {
    group: "sessions",
    description: "A session's turns and what each changed in its folder; with a turn, its diff",
    load: command(() => import("./commands/checkpoints.ts").then((m) => m.diffCommand)),
  },
  rewind: {
    group: "sessions",
    description: "Put a session's folder or conversation back as turn n left it (--undo: take it back)",
    load: command(() => import("./commands/checkpoints.ts").then((m) => m.rewindCommand)),
  },
  kill: {
    group: "sessions",
    description: "Kill a session (its agent window closes)",
    load: command(() => import("./commands/kill.ts").then((m) => m.default)),
  },
  budget: {
    group: "sessions",
    description: "Show, raise (--usd N), clear (--clear) or stop (--stop) a session's budget",
    load: command(() => import("./commands/budget.ts").then((m) => m.default)),
  },
  handoff: {
    group: "sessions",
    description: "Hand a session's task to a new session of another agent (--agent) in the same folder",
    load: command(() => import("./commands/handoff.ts").then((m) => m.default)),
  },
  fleet: {
    group: "server",
    description: "The fleet's hosts (a fleet on PostgreSQL): online, lease, headroom, sessions",
    load: command(() => import("./commands/fleet.ts").then((m) => m.default)),
  },
  status: {
    group: "server",
    description: "Version, status, uptime, port and session counts of the running server",
    load: command(() => import("./commands/status.ts").then((m) => m.default)),
  },
  stop: {
    group: "server",
    description: "Stop the running server; the agents keep running",
    load: command(() => import("./commands/stop.ts").then((m) => m.default)),
  },
  acp: {
    group: "server",
    description: "Serve the Agent Client Protocol (stdio) for editors: Zed, JetBrains, acpx",
    load: command(() => import("./commands/acp.ts").then((m) => m.default)),
  },
  mcp: {
    group: "server",
    description: "Start the MCP server (stdio) for the running ag server",
    load: command(() => import("./commands/mcp.ts").then((m) => m.default)),
  },
  channels: {
    group: "server",
    description: "Channel health, and dead letters: list, retry or clear them",
    load: command(() => import("./commands/channels.ts").then((m) => m.default)),
  },
  init: {
    group: "setup",
    description: "Create .svc/config.yaml; --from-template writes starter agent files",
    load: command(() => import("./commands/init.ts").then((m) => m.default)),
  },
  doctor: {
    group: "setup",
    description: "Check starter files, tmux, the agent CLI, the config and the server",
    load: command(() => import("./commands/doctor.ts").then((m) => m.default)),
  },
  auth: {
    group: "setup",
    description: "Move clientAuthToken from .svc/config.yaml to the token file: ag auth migrate",
    load: command(() => import("./commands/auth.ts").then((m) => m.default)),
  },
  hook: {
    group: "setup",
    description: "Forward an agent hook payload (used by the agents' settings)",
    hidden: true,
    load: command(() => import("./commands/hook.ts").then((m) => m.default)),
  },
};

const GROUP_TITLES = { sessions: "SESSIONS", server: "SERVER", setup: "SETUP" } as const;

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
  "--text",
  "-c",
  "--criterion",
  "--reviewers",
  "--show",
]);

export async function runCli(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    const index = commandIndex(argv);
    const name = index === -1 ? undefined : argv[index];
    if (name !== undefined && !(name in COMMANDS)) {
      // `ag --prot 9100`: the typo, not its value, is what to report.
      rejectUnknownFlags(argv.slice(0, index), (await loadServe()).args as ArgsDef);
      throw unknownCommand(name);
    }
    // A command's reader may stop reading (`ag list | head -1`); the server logs on regardless.
    if (name) endOnClosedPipe();
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
    // "-" is a value (stdin, for ag send), and so is a negative number.
    if (!arg.startsWith("-") || arg === "-" || /^-\d/.test(arg)) continue;
    const flag = arg.replace(/^--?(no-)?/, "").split("=")[0]!;
    if (!known.has(flag)) {
      const guess = nearest(
        flag,
        [...known].filter((k) => k.length > 1),
      );
      const hint = guess ? `did you mean --${guess}?` : "see ag --help";
      throw new AgError("USAGE_ERROR", `unknown option ${arg.split("=")[0]} (${hint})`);
    }
  }
}

function unknownCommand(name: string): AgError {
  const shown = Object.entries(COMMANDS)
    .filter(([, c]) => !c.hidden)
    .map(([n]) => n);
  const guess = nearest(name, shown);
  const hint = guess ? `did you mean \`ag ${guess}\`?` : "see ag --help";
  return new AgError("USAGE_ERROR", `unknown command "${name}" (${hint})`);
}

async function usage(command: AnyCommand, name: string | undefined): Promise<string> {
  const args = (await resolveValue(command.args)) ?? {};
  if (name) return renderCommandHelp(name, (await resolveValue(command.meta)) ?? {}, args);
  const groups = (Object.keys(GROUP_TITLES) as Array<keyof typeof GROUP_TITLES>).map((group) => ({
    title: GROUP_TITLES[group],
    commands: Object.entries(COMMANDS)
      .filter(([, c]) => c.group === group && !c.hidden)
      .map(([n, c]) => ({ name: n, description: c.description })),
  }));
  return renderRootHelp(VERSION, args, groups);
}

async function resolveValue<T>(
  value: T | (() => T | Promise<T>) | Promise<T> | undefined,
): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}
