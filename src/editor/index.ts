/** ag as an ACP agent for editors (`ag acp`): the domain's public surface. */
export { createEditorAgent, type EditorAgentDeps } from "./agent.ts";
export { DEFAULT_MODEL } from "./options.ts";
export type { AgApi, EventFeed, FeedEvent } from "./port.ts";
