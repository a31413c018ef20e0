import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { ToolInfo, toolInfos } from "../../mcp/tools.ts";

/** The MCP tools of `ag mcp`, from the same table the MCP server serves. */
export function toolRoutes() {
  const tools = toolInfos();
  return new Elysia({ name: "routes/tools" }).get("/v1/tools", () => tools, {
    response: Type.Array(ToolInfo),
    detail: {
      summary: "The MCP tools of `ag mcp`: input and output JSON Schemas, title and annotations",
      tags: ["mcp"],
    },
  });
}
