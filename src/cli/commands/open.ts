import { defineCommand } from "citty";
import { readDesktopEnv } from "../../config/load.ts";
import { sessionUrl } from "../../shared/dashboard-links.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { connect, dashboardUrl } from "../connect.ts";
import { openInBrowser } from "../desktop.ts";
import { parseHit, sessionOfHit } from "../hits.ts";
import { printLine, printNote } from "../output.ts";
import { resolveSession } from "../resolve.ts";

/** `ag open [<session>]`: the dashboard, or a session's page in it, printed and opened. */
export default defineCommand({
  meta: { name: "open", description: "Print the dashboard link (a session's page with one) and open it" },
  args: {
    ...GLOBAL_ARGS,
    session: {
      type: "positional",
      required: false,
      description:
        "A session: its id, a unique start of the id, its name, or a search hit (<session>#<message>)",
      valueHint: "session",
    },
  },
  async run({ args }) {
    const { loaded, client } = connect(args);
    const dashboard = dashboardUrl(loaded, client.baseUrl);
    const hit = args.session ? parseHit(args.session) : null;
    const given = hit ? sessionOfHit(hit, "open") : args.session;
    const url = given
      ? sessionUrl(dashboard, (await resolveSession(client, given)).id, hit?.messageId)
      : dashboard;
    if (!loaded.config.dashboardEnabled && loaded.sources.dashboardUrl === "default")
      printNote("the dashboard is turned off (SVC_DASHBOARD_ENABLED=false): this link will not answer");
    printLine(url);
    if (openInBrowser(url, readDesktopEnv())) printNote("opened in your browser");
    if (hit) printNote(`message ${hit.messageId}: ag read ${args.session}`);
  },
});
