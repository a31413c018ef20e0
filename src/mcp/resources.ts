import { asProtocolError, ProtocolError, RESOURCE_NOT_FOUND } from "./errors.ts";
import type { ToolApi } from "./tools.ts";

/** SPEC's four resources: two fixed ones, and two per session (as URI templates). */
export const RESOURCES = [
  {
    uri: "svc://sessions",
    name: "sessions",
    description: "Every session ag knows, newest first (JSON array)",
    mimeType: "application/json",
  },
  {
    uri: "svc://health",
    name: "health",
    description: "Server health: version, uptime, session counts, tmux",
    mimeType: "application/json",
  },
];

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: "svc://sessions/{id}/transcript",
    name: "transcript",
    description: "The newest 50 transcript entries of a session, oldest first (JSON)",
    mimeType: "application/json",
  },
  {
    uriTemplate: "svc://sessions/{id}/pane",
    name: "pane",
    description: "A session's terminal screen as text",
    mimeType: "text/plain",
  },
];

const SESSION_RESOURCE = /^svc:\/\/sessions\/([^/]+)\/(transcript|pane)$/;

export async function readResource(api: ToolApi, uri: string) {
  const json = (value: unknown) => ({
    uri,
    mimeType: "application/json",
    text: JSON.stringify(value, null, 2),
  });
  try {
    if (uri === "svc://sessions") return { contents: [json(await api.get("/v1/sessions"))] };
    if (uri === "svc://health") return { contents: [json(await api.get("/v1/health"))] };
    const match = SESSION_RESOURCE.exec(uri);
    if (!match) throw new ProtocolError(RESOURCE_NOT_FOUND, `no resource ${uri}`);
    const session = `/v1/sessions/${encodeURIComponent(decodeURIComponent(match[1]!))}`;
    if (match[2] === "transcript") return { contents: [json(await api.get(`${session}/transcript/cursor`))] };
    const pane = await api.get<{ content: string }>(`${session}/pane`);
    return { contents: [{ uri, mimeType: "text/plain", text: pane.content }] };
  } catch (error) {
    throw asProtocolError(error);
  }
}
