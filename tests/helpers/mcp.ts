import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** SPEC's two MCP resources and two resource templates. */
export const SPEC_RESOURCES = {
  uris: ["svc://health", "svc://sessions"],
  templates: ["svc://sessions/{id}/pane", "svc://sessions/{id}/transcript"],
};

/** The resources and resource templates an MCP server lists, sorted, in SPEC_RESOURCES' shape. */
export async function listedResources(client: Client): Promise<typeof SPEC_RESOURCES> {
  const { resources } = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  return {
    uris: resources.map((r) => r.uri).sort(),
    templates: resourceTemplates.map((r) => r.uriTemplate).sort(),
  };
}
