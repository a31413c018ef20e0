import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { defineCommand } from "citty";
import { currentAuthToken, type LoadedConfig } from "../../config/load.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { VERSION } from "../../version.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient, resolveServerUrl } from "../client.ts";
import { stdioCommandSetup } from "../stdio.ts";

/**
 * Creating sessions waits for prompt delivery (up to SVC_CREATE_WAIT_MS each, and a batch runs
 * several rounds of them): the MCP client's own timeout is the one that should decide.
 */
const CALL_TIMEOUT_MS = 10 * 60_000;

/** `ag mcp`: an MCP server on stdin/stdout that drives a running ag through its REST API. */
export default defineCommand({
  meta: { name: "mcp", description: "Start the MCP server (stdio) for the running ag server" },
  args: { ...GLOBAL_ARGS },
  async run({ args }) {
    const { loaded, logger } = stdioCommandSetup(args.config);
    const baseUrl = resolveServerUrl(loaded, parsePortFlag(args.port) ?? configuredPort(loaded));
    // Asked at each call: a server started after this process may generate the token only then.
    const api = createApiClient({
      baseUrl,
      token: () => currentAuthToken(loaded.config),
      timeoutMs: CALL_TIMEOUT_MS,
    });

    const server = createMcpServer({ api, version: VERSION, logger });
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      // The transport does not notice the client going away: end of stdin is that signal.
      process.stdin.once("end", resolve);
      process.stdin.once("close", resolve);
    });
    await server.connect(transport);
    logger.debug(`ag mcp ${VERSION} serving ${baseUrl} over stdio`);
    await closed;
    await server.close();
  },
});

/**
 * SPEC: `ag mcp` reads SVC_PORT. A port set in the environment or a config file beats the live
 * server recorded in the state directory (what other commands use); SVC_BASE_URL beats both.
 * Port 0 names no server, so it falls back to the recorded one.
 */
function configuredPort(loaded: LoadedConfig): number | undefined {
  if (loaded.sources.port === "default" || loaded.config.port === 0) return undefined;
  if (loaded.sources.baseUrl !== "default") return undefined;
  return loaded.config.port;
}
