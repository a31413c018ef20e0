import { declaredEnvironment } from "../shared/environment.ts";
import { notFound } from "../shared/install.ts";
import { tmuxArgv, tmuxCommandLine } from "./argv.ts";
import { type ControlReply, createControlFramer } from "./framing.ts";

/**
 * One tmux control-mode client process (`tmux -L <socket> -C <start-up command>`), commands on
 * its stdin, replies and notifications on its stdout. tmux runs a client's commands in order,
 * so replies are matched to commands first-in first-out; each reply's extent is found by its
 * `%begin` number (see framing.ts).
 */
export interface ControlConnection {
  /** Runs one command; resolves with its output lines, rejects with tmux's error text. */
  run(args: readonly string[]): Promise<string[]>;
  /**
   * Runs commands written to tmux in ONE write, one promise each. tmux reads them together and
   * runs them one after another with no pane read in between: what they see is one instant.
   */
  runTogether(commands: ReadonlyArray<readonly string[]>): Array<Promise<string[]>>;
  /** Ends this client (stdin EOF = detach). The server and its windows stay. */
  close(): Promise<void>;
}

export interface ControlConnectionOptions {
  binary: string;
  socket: string;
  /** Read only when this client starts the server; null = none (never the user's ~/.tmux.conf). */
  configFile: string | null;
  /**
   * The client's environment: a server this client starts inherits it as its global environment
   * (shared/environment.ts, the declared one: never ag's settings, nor $TMUX); the default.
   */
  env?: Record<string, string>;
  /** The command after `-C`, e.g. `new-session -A -s ag …`; it answers the first block. */
  startup: string[];
  startupTimeoutMs?: number;
  commandTimeoutMs?: number;
  onNotification(line: string): void;
  /** `%output` of a pane, its data still escaped (framing.ts `decodeOutputData`). */
  onOutput?(paneId: string, escaped: Uint8Array): void;
  /** Called once, when the client process is gone, with the reason. */
  onClose(reason: string): void;
}

interface Pending {
  command: string;
  resolve(lines: string[]): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export async function openControlConnection(options: ControlConnectionOptions): Promise<ControlConnection> {
  const startupTimeoutMs = options.startupTimeoutMs ?? 10_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 15_000;
  const argv = tmuxArgv(options.binary, options.socket, "-f", options.configFile ?? "/dev/null", "-C");
  const env = options.env ?? declaredEnvironment();
  let proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  try {
    proc = Bun.spawn([...argv, ...options.startup], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(code === "ENOENT" ? notFound("tmux", options.binary) : `cannot run tmux: ${error}`);
  }

  const pending: Pending[] = [];
  let closedReason: string | null = null;
  let exitNotice = "";
  const startup = Promise.withResolvers<void>();

  const framer = createControlFramer({
    reply(reply: ControlReply) {
      if (reply.flags === 0) {
        // The start-up command's block (flags 0: it did not come from stdin).
        // Settling twice is a no-op, so a later flags-0 block (a hook's) changes nothing.
        if (reply.ok) startup.resolve();
        else startup.reject(new Error(`tmux start-up failed: ${reply.lines.join(" ")}`));
        return;
      }
      const entry = pending.shift();
      if (!entry) return;
      clearTimeout(entry.timer);
      if (reply.ok) entry.resolve(reply.lines);
      else entry.reject(new Error(`tmux ${entry.command}: ${reply.lines.join(" ") || "failed"}`));
    },
    notification(line) {
      if (line === "%exit" || line.startsWith("%exit ")) exitNotice = line.slice(6);
      try {
        options.onNotification(line);
      } catch {
        // A failing handler must not stop the reader: every later reply would hang.
      }
    },
    output(paneId, escaped) {
      try {
        options.onOutput?.(paneId, escaped);
      } catch {
        // As above.
      }
    },
  });

  const reading = (async () => {
    for await (const chunk of proc.stdout) framer.push(chunk);
  })().catch(() => {});
  const stderr = new Response(proc.stderr).text().catch(() => "");

  const finished = (async () => {
    const code = await proc.exited;
    // A daemonised server never holds our pipe, but do not hang on it if one ever did.
    await Promise.race([reading, Bun.sleep(1000)]);
    const detail = (await Promise.race([stderr, Bun.sleep(200).then(() => "")])).trim().split("\n")[0];
    // tmux says `%exit` with no reason when its server is killed or the session destroyed.
    closedReason =
      exitNotice ||
      detail ||
      (code === 0 ? "server or session ended" : `tmux client exited with code ${code}`);
    const error = new Error(`tmux connection lost: ${closedReason}`);
    startup.reject(error);
    for (const entry of pending.splice(0)) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    options.onClose(closedReason);
  })();

  function runTogether(commands: ReadonlyArray<readonly string[]>): Array<Promise<string[]>> {
    if (closedReason !== null) {
      const lost = new Error(`tmux connection lost: ${closedReason}`);
      return commands.map(() => Promise.reject(lost));
    }
    let lines: string[];
    try {
      lines = commands.map((args) => tmuxCommandLine(args));
    } catch (error) {
      return commands.map(() => Promise.reject(error));
    }
    const entries: Pending[] = [];
    const promises = commands.map(
      (args) =>
        new Promise<string[]>((resolve, reject) => {
          entries.push({
            command: args[0]!,
            resolve,
            reject,
            // The entry stays queued after a timeout: its late reply must still be consumed in order.
            timer: setTimeout(
              () => reject(new Error(`tmux ${args[0]} did not answer within ${commandTimeoutMs} ms`)),
              commandTimeoutMs,
            ),
          });
        }),
    );
    pending.push(...entries);
    try {
      proc.stdin.write(`${lines.join("\n")}\n`);
      proc.stdin.flush();
    } catch (error) {
      for (const entry of entries) {
        pending.splice(pending.indexOf(entry), 1);
        clearTimeout(entry.timer);
        entry.reject(new Error(`tmux connection lost: ${error}`));
      }
    }
    return promises;
  }

  const connection: ControlConnection = {
    run: (args) => runTogether([args])[0]!,
    runTogether,
    async close() {
      if (closedReason === null) {
        try {
          proc.stdin.end();
        } catch {
          // Already gone; the exit below settles everything.
        }
      }
      const kill = setTimeout(() => proc.kill(), 2000);
      await finished;
      clearTimeout(kill);
    },
  };

  const timeout = setTimeout(() => {
    startup.reject(new Error(`tmux did not start within ${startupTimeoutMs} ms`));
  }, startupTimeoutMs);
  try {
    await startup.promise;
  } catch (error) {
    proc.kill();
    await finished;
    throw error;
  } finally {
    clearTimeout(timeout);
  }
  return connection;
}
