import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { HOOK_SECRET_HEADER } from "../../sessions/index.ts";
import { printLine } from "../output.ts";

/**
 * `ag hook <event> --url U --secret-file F`: forwards a hook payload (stdin) to ag for the agent
 * events that can only run commands. ag's answer, when it decides something (a refusal by the
 * session's permission policy), is printed on stdout, where a command hook's decision goes; "no
 * decision" prints nothing (some agents add a hook's plain stdout to the model's context). Never
 * fails the agent: a hook that errors would show in its UI, so every failure exits 0 silently;
 * the state then comes from the other signals.
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
      const answer = response.ok ? await response.json() : null;
      if (answer && typeof answer === "object" && Object.keys(answer).length > 0)
        printLine(JSON.stringify(answer));
    } catch {
      // see above: silence is the right answer here
    }
  },
});
