import { TOOLS, type ToolDefinition } from "./tools.ts";

/**
 * REST's words in MCP's. A message that names a route (an error's "answer it with POST
 * /v1/sessions/<id>/answer {option | text}") names, over MCP, the tool that makes that call
 * (`answer_question (sessionId "<id>")`), and a request body's field is the tool's argument. The
 * rules come from the tool table itself (each tool's `rest`): no hint text is written twice.
 */

interface Rule {
  pattern: RegExp;
  tool: ToolDefinition;
  /** The tool's argument the route's path parameter becomes, when it has one. */
  argument: string | null;
}

/** A path segment in a message: an id, with no sentence punctuation after it (`…/abc.` ends at c). */
const SEGMENT = String.raw`([\w~%-]+(?:\.[\w~%-]+)*)`;

/** A request body sketched after a route: `{option | text}`, `{"option": N} or {"text": "…"}`. */
const BODY_SKETCH = String.raw`(?:\s+\{[^}]*\}(?:\s+or\s+\{[^}]*\})*)?`;

function ruleOf(tool: ToolDefinition): Rule {
  const { method, path } = tool.rest;
  const route = path
    .split(/(:\w+)/)
    .map((part) => (part.startsWith(":") ? SEGMENT : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  const argument = path.includes(":") ? (Object.keys(tool.input.properties)[0] ?? null) : null;
  // The route ends where the message's path does: /v1/sessions is not /v1/sessions/<id>/send.
  return { pattern: new RegExp(`\\b${method} ${route}(?![\\w/-])${BODY_SKETCH}`, "g"), tool, argument };
}

/** One rule per route: where several tools make the same call (send_*), the first one names it. */
const RULES: readonly Rule[] = TOOLS.filter(
  (tool, i) =>
    TOOLS.findIndex((t) => t.rest.method === tool.rest.method && t.rest.path === tool.rest.path) === i,
).map(ruleOf);

export function inMcpTerms(message: string): string {
  let text = message.replace(/\binvalid body\b/g, "invalid arguments");
  for (const { pattern, tool, argument } of RULES) {
    text = text.replace(pattern, (_match, value?: string) =>
      argument && value !== undefined ? `${tool.name} (${argument} "${value}")` : tool.name,
    );
  }
  return text;
}
