import { defineCommand } from "citty";
import type { SearchIndexStats, SearchResult } from "../../search/search.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, parseCountFlag } from "../args.ts";
import { connect } from "../connect.ts";
import { hitLines } from "../hits.ts";
import { colourEnabled, plural, printJson, printLine, printNote } from "../output.ts";

/** The filters of GET /v1/search, as flags (`--work-dir` is its `workDir`). */
const FILTERS = {
  agent: "agent",
  role: "role",
  host: "host",
  "work-dir": "workDir",
  tenant: "tenant",
  status: "status",
  since: "since",
  until: "until",
  origin: "origin",
} as const;

/**
 * `ag search <words…>`: every conversation's turns that match, best first, each a hit to pick up
 * from (`ag read <hit>`, `ag open <hit>`, `ag resume <hit>`, `ag fork <hit>`). `--rebuild` reads
 * every transcript again; `--import` takes in the agent CLIs' own history on this host.
 */
export default defineCommand({
  meta: { name: "search", description: "Search every conversation's turns (live, ended, imported)" },
  args: {
    ...GLOBAL_ARGS,
    query: {
      type: "positional",
      required: false,
      description: 'Words (all must match), "a phrase", pre* (prefix), OR',
      valueHint: "words",
    },
    agent: { type: "string", description: "Only this agent's (claude, codex, gemini, opencode)" },
    role: { type: "string", description: "Only prompts, answers or tool calls (prompt, answer, tool)" },
    host: { type: "string", description: "Only this host's" },
    "work-dir": { type: "string", description: "Only sessions in this folder or below it" },
    tenant: { type: "string", description: "Only this tenant's sessions" },
    status: { type: "string", description: "Only sessions in this state now (idle, completed…)" },
    since: { type: "string", description: "Only turns written at or after (ISO date-time)" },
    until: { type: "string", description: "Only turns written before (ISO date-time)" },
    origin: { type: "string", description: "session, or external (imported history; admin)" },
    limit: { type: "string", description: "Hits, 1–100 (default 20)", valueHint: "number" },
    rebuild: { type: "boolean", description: "Drop the index and read every session's transcript again" },
    import: { type: "boolean", description: "Index the agent CLIs' own history on this host (read only)" },
    json: { type: "boolean", description: "Machine-readable output: the API's answer" },
  },
  async run({ args }) {
    const { client } = connect(args, { timeoutMs: () => 600_000 });
    const words = [args.query, ...args._.slice(1)].filter(Boolean).join(" ");
    if (args.rebuild || args.import) {
      const stats = args.rebuild
        ? await client.send<SearchIndexStats>("POST", "/v1/search/rebuild", { import: args.import === true })
        : await client.send<SearchIndexStats>("POST", "/v1/search/import");
      if (!words) return args.json ? printJson(stats) : printNote(indexLine(stats));
      printNote(indexLine(stats));
    }
    if (!words)
      throw new AgError("USAGE_ERROR", "ag search needs words to look for (or --rebuild, --import)");
    const params = new URLSearchParams({ q: words });
    for (const [flag, name] of Object.entries(FILTERS)) {
      const value = args[flag as keyof typeof FILTERS];
      if (typeof value === "string") params.set(name, value);
    }
    params.set("limit", String(parseCountFlag("--limit", args.limit, 20, 100)));
    const result = await client.get<SearchResult>(`/v1/search?${params}`);
    if (args.json) return printJson(result);
    if (result.hits.length === 0) return printLine("no match");
    const colour = colourEnabled();
    for (const hit of result.hits) for (const line of hitLines(hit, colour)) printLine(line);
    printNote(
      `${plural(result.hits.length, "hit")} in ${result.took_ms} ms · pick up: ag read|open|resume|fork <hit>`,
    );
  },
});

function indexLine(stats: SearchIndexStats): string {
  return `index: ${plural(stats.sources, "conversation")} (${stats.external} external), ${plural(stats.turns, "turn part")} · ${stats.took_ms} ms`;
}
