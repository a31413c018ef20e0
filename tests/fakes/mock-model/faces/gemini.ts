import type { MessagesBody } from "../choose.ts";
import { estimateTokens } from "../pacing.ts";
import type { Face } from "./face.ts";
import { geminiReply, googleError } from "./gemini-reply.ts";
import { neutralToolName, toNeutralCall } from "./gemini-tools.ts";

/**
 * The Gemini API (generativelanguage v1beta), as the Gemini CLI 0.61.0 calls it with
 * GOOGLE_GEMINI_BASE_URL: POST /v1beta/models/<model>:streamGenerateContent?alt=sse (the main
 * loop, SSE of GenerateContentResponse) and :generateContent (side requests: the session summary);
 * :countTokens and the model list for completeness. Roles user/model, parts text / thought /
 * functionCall / functionResponse; tools as functionDeclarations.
 */

export type Part = Record<string, unknown> & {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
};
type Content = { role?: string; parts?: Part[] };

const MODELS = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-flash-preview"];

export const geminiFace: Face = {
  name: "gemini",
  handles: (method, path) =>
    method === "POST" && /\/models\/[^/]+:(streamGenerateContent|generateContent)$/.test(path),
  read: readBody,
  reply: geminiReply,
  other(method, path, body) {
    if (method === "POST" && /\/models\/[^/:]+:countTokens$/.test(path))
      return Response.json({ totalTokens: estimateTokens(JSON.stringify(body.contents ?? body)) });
    if (method === "GET" && /^\/v1(beta|alpha)?\/models\/?$/.test(path))
      return Response.json({ models: MODELS.map(modelInfo) });
    const one = path.match(/^\/v1(?:beta|alpha)?\/models\/([^/:]+)$/)?.[1];
    if (method !== "GET" || !one) return null;
    const id = decodeURIComponent(one);
    return MODELS.includes(id) ? Response.json(modelInfo(id)) : googleError(404, `model ${id} not found`);
  },
};

function readBody(body: Record<string, unknown>, url: URL): MessagesBody {
  const contents = (body.contents as Content[]) ?? [];
  const model = decodeURIComponent(url.pathname.match(/\/models\/([^/:]+)/)?.[1] ?? "gemini-mock");
  const stream = url.pathname.endsWith(":streamGenerateContent");
  const title = titleRequest(contents);
  if (title !== null)
    return { model, stream, system: "Write a short title for the session", messages: title };
  const instruction = body.systemInstruction as Content | string | undefined;
  const system = typeof instruction === "string" ? instruction : partsText(instruction?.parts);
  const cwd = cwdOf(contents);
  const declarations = (
    (body.tools as Array<{ functionDeclarations?: Array<{ name?: string }> }>) ?? []
  ).flatMap((t) => t.functionDeclarations ?? []);
  return {
    model,
    stream,
    system: cwd ? `Working directory: ${cwd}\n${system}` : system,
    messages: contents.map(neutralMessage).filter((m) => m.content.length > 0),
    tools: declarations.map((d) => ({ name: neutralToolName(d.name ?? "") })),
  };
}

/** One content as a neutral message; the CLI's `<session_context>` part is not the user's. */
function neutralMessage(content: Content) {
  const role = content.role === "model" ? "assistant" : "user";
  const blocks = (content.parts ?? []).flatMap((part): Record<string, unknown>[] => {
    if (part.functionCall) {
      const call = toNeutralCall(part.functionCall.name ?? "", part.functionCall.args ?? {});
      return [{ type: "tool_use", id: part.functionCall.id ?? "", ...call }];
    }
    if (part.functionResponse) {
      const text = responseText(part.functionResponse.response);
      const id = part.functionResponse.id ?? "";
      return [{ type: "tool_result", tool_use_id: id, content: [{ type: "text", text }] }];
    }
    if (typeof part.text !== "string") return [];
    if (part.thought) return [{ type: "thinking", thinking: part.text }];
    const text = role === "user" ? part.text.replace(CONTEXT, "") : part.text;
    return text ? [{ type: "text", text }] : [];
  });
  return { role, content: blocks };
}

/** The start-of-chat context the CLI sends as the first user part (the cwd is in it). */
const isContextPart = (text: string) => /^\s*<session_context>/.test(text);
const CONTEXT = /^\s*<session_context>[\s\S]*?(?:<\/session_context>\s*|$)/;

function cwdOf(contents: Content[]): string | undefined {
  const context = contents
    .flatMap((c) => c.parts ?? [])
    .find((p) => typeof p.text === "string" && isContextPart(p.text));
  return context?.text?.match(/Workspace Directories:\**\s*\n\s*-\s*(\/\S+)/)?.[1];
}

/**
 * The CLI's session summary (its title in --list-sessions), asked at start-up for the previous
 * session: "Summarize the user's primary intent … Conversation:\nUser: … Summary (max 80 chars):".
 * As the neutral title request: the first prompt of that conversation in <session> tags.
 */
function titleRequest(contents: Content[]): MessagesBody["messages"] | null {
  const text = contents.length === 1 ? partsText(contents[0]!.parts) : "";
  if (!/\nSummary \(max \d+ chars\):\s*$/.test(text)) return null;
  const prompts = text.split(/\n\nUser: |\nUser: /).slice(1);
  const first = prompts.find((p) => !isContextPart(p))?.split(/\n\n(?:Assistant|Summary)/)[0] ?? "";
  return [{ role: "user", content: [{ type: "text", text: `<session>${first.trim()}</session>` }] }];
}

function partsText(parts: Part[] | undefined): string {
  return (parts ?? [])
    .filter((p) => typeof p.text === "string" && !p.thought)
    .map((p) => p.text!)
    .join("");
}

function responseText(response: Record<string, unknown> | undefined): string {
  const value = response?.output ?? response?.error ?? response?.content ?? response ?? "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function modelInfo(id: string) {
  return {
    name: `models/${id}`,
    displayName: id,
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ["generateContent", "countTokens", "streamGenerateContent"],
  };
}
