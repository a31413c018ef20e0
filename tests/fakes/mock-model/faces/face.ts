import type { MessagesBody } from "../choose.ts";
import type { ReplyDefaults, Settle } from "../pacing.ts";
import type { MockReply } from "../rules.ts";

/**
 * One provider's wire protocol in front of the mock's one script. A face reads the provider's
 * request as the neutral (Anthropic-shaped) body the script reads — the agent's own tool names
 * mapped to the neutral ones (Bash, Write, Edit, Read, AskUserQuestion), tool calls and results
 * as tool_use / tool_result blocks, the cwd as "Working directory: <cwd>" in `system` — and
 * writes the script's reply back in the provider's format, neutral tool calls as the agent's.
 */
export interface Face {
  /** anthropic, openai-responses, gemini… */
  name: string;
  /**
   * Whether this face answers the model request (the one the script replies to). Agents on the
   * same provider share a path: the request (its headers) tells them apart.
   */
  handles(method: string, path: string, request?: Request): boolean;
  read(body: Record<string, unknown>, url: URL): MessagesBody;
  reply(
    request: Request,
    body: MessagesBody,
    raw: Record<string, unknown>,
    spec: MockReply,
    defaults: ReplyDefaults,
    settle: Settle,
  ): Promise<Response>;
  /** Any other endpoint its clients call (model lists, probes), or null. */
  other?(method: string, path: string, body: Record<string, unknown>): Response | null;
}
