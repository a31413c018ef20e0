import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { HOOK_SECRET_HEADER } from "../../sessions/index.ts";

/**
 * `ag hook <event> --url U --secret-file F`: forwards a hook payload (stdin) to ag for the agent
 * events that can only run commands, and prints ag's decision, when it has one (a refusal of the
 * tool, as the agent's hook protocol words it), on stdout for the agent to read. Never fails the
 * agent: a hook that errors would show in its UI, so every failure exits 0 silently; the state
 * then comes from the other signals (and no decision means the agent's own dialog asks).
 */
export default defineCommand({
  meta: {
    name: "hook",
    description: "Forward an agent hook payload from stdin to ag (used by agent settings)",
    hidden: true,
  },
  args: {
    event: { type: "positional", description: "Hook event name", required: true },
    url: { type: "string", description: "Hook URL", required: true },
    "secret-file": { type: "string", description: "File holding the session's hook secret", required: true },
  },
  async run({ args }) {
    try {
      const body = await Bun.stdin.text();
      const secret = readFileSync(args["secret-file"], "utf8").trim();
      const response = await fetch(args.url, {
        method: "POST",
        headers: { "content-type": "application/json", [HOOK_SECRET_HEADER]: secret },
        body,
        signal: AbortSignal.timeout(5000),
      });
      const decision = response.ok ? await response.json() : null;
      if (decision && typeof decision === "object" && Object.keys(decision).length > 0)
        process.stdout.write(`${JSON.stringify(decision)}\n`);
    } catch {
      // see above: silence is the right answer here
    }
  },
});
