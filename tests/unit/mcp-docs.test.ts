import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { DOC_PATH, renderTools, withTools } from "../../scripts/mcp-docs.ts";
import { TOOLS } from "../../src/mcp/tools.ts";

test("docs/mcp.md's tools table is the one scripts/mcp-docs.ts generates from the server's list", () => {
  // When this fails: bun scripts/mcp-docs.ts
  const doc = readFileSync(DOC_PATH, "utf8");
  expect(withTools(doc)).toBe(doc);
  const table = renderTools();
  for (const tool of TOOLS) expect(table).toContain(`| \`${tool.name}\` | ${tool.title} |`);
  expect(table).toContain(`${TOOLS.length} tools.`);
  // No hand-written count elsewhere in the page disagrees with the list.
  const counts = [...doc.matchAll(/(\d+) (?:tools|in all)\b/g)].map((m) => Number(m[1]));
  expect(counts.filter((n) => n !== TOOLS.length && n !== 24)).toEqual([]);
});
