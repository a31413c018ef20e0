import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { checkArguments, ProtocolError, toolError } from "./errors.ts";
import { getPrompt, promptInfos } from "./prompts.ts";
import { RESOURCE_TEMPLATES, RESOURCES, readResource } from "./resources.ts";
import { summarize } from "./summary.ts";
import { findTool, structuredResult, type ToolApi, type ToolDefinition, toolInfos } from "./tools.ts";

/**
 * ag's MCP server: the tools, resources and prompts over the REST API of a running ag. The SDK's
 * low-level Server, not McpServer: McpServer wants Zod schemas, and our inputs are the REST
 * routes' TypeBox schemas, which already are JSON Schema.
 */
export function createMcpServer(deps: { api: ToolApi; version: string; logger?: Logger }): Server {
  const server = new Server(
    { name: "ag", version: deps.version },
    { capabilities: { tools: {}, resources: {}, prompts: {} } },
  );
  const tools = toolInfos();

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = findTool(request.params.name);
    // An unknown tool is the client's protocol mistake, not a failed call (MCP: invalid params).
    if (!tool) throw new ProtocolError(-32602, `no tool ${request.params.name}`);
    return callTool(tool, deps.api, request.params.arguments ?? {}, deps.logger);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    readResource(deps.api, request.params.uri),
  );
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: promptInfos() }));
  server.setRequestHandler(GetPromptRequestSchema, (request) =>
    getPrompt(deps.api, request.params.name, request.params.arguments),
  );
  return server;
}

async function callTool(tool: ToolDefinition, api: ToolApi, args: Record<string, unknown>, logger?: Logger) {
  try {
    checkArguments(tool.input, args);
    const result = await tool.call(api, args as never);
    const text = tool.render ? tool.render(result) : JSON.stringify(result, null, 2);
    // The plain-language summary comes first: what an agent reads before deciding its next call.
    const summary = summarize(args, result);
    return {
      content: [
        ...(summary ? [{ type: "text" as const, text: summary }] : []),
        { type: "text" as const, text },
      ],
      // What the tool's outputSchema describes: the REST body, or a list under its name.
      structuredContent: structuredResult(tool, result),
    };
  } catch (error) {
    if (!(error instanceof AgError)) logger?.error(`tool ${tool.name} failed`, error);
    return toolError(error);
  }
}
