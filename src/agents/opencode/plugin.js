// ag's plugin for OpenCode, written into each session's own config dir (OPENCODE_CONFIG_DIR).
// Plain JS, node built-ins only: OpenCode loads it as it is, with nothing to install.
//
// It does two things for ag, from what OpenCode tells its plugins:
//  - forwards the events ag reads the state from as hooks (POST <hookUrl>/<event> with the
//    session's secret header), one at a time and in order; before a tool runs it waits for ag's
//    answer, and a refusal there is thrown, which is how an OpenCode plugin denies a tool;
//  - writes the conversation, as its parts finish, to an append-only JSONL file (OpenCode keeps
//    its own in SQLite, updated in place): prompts, answers, tool calls and results, token usage,
//    errors and turn ends, one line each, each written once.
// Its settings (ag.json beside the plugin folder) name the hook URL, the secret's file and the
// conversation file; the secret itself is never in argv, the environment or the pane.

import { appendFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HOOK_TIMEOUT_MS = 10_000;
const MAX_TEXT = 100_000;

/** Module state: OpenCode may call the plugin's factory more than once per process. */
let instance = null;

export const AgPlugin = async () => {
  instance ??= createAgHooks(readSettings());
  return instance;
};

function readSettings() {
  const settings = JSON.parse(
    readFileSync(join(dirname(dirname(fileURLToPath(import.meta.url))), "ag.json"), "utf8"),
  );
  return { ...settings, secret: readFileSync(settings.secretFile, "utf8").trim() };
}

function createAgHooks(settings) {
  const startedAt = Date.now();
  const written = new Set();
  const parents = new Map(); // session id -> parent session id (null for a main conversation)
  const messages = new Map(); // message id -> { role, model, copied: older than this process (a fork's copy) }
  const calls = new Map(); // permission or question id -> { tool, callID }
  const tools = new Map(); // call id -> tool name
  let queue = Promise.resolve();

  const sidechain = (session) => Boolean(parents.get(session));
  const clip = (text) =>
    typeof text === "string" && text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;

  function write(id, line) {
    if (written.has(id)) return;
    written.add(id);
    const entry = {
      ...line,
      id,
      at: new Date().toISOString(),
      ...(sidechain(line.session) ? { sidechain: true } : {}),
      ...(messages.get(line.message)?.copied ? { copied: true } : {}),
    };
    try {
      appendFileSync(settings.conversationFile, `${JSON.stringify(entry)}\n`);
    } catch {
      // A conversation file that cannot be written must not stop the agent.
    }
  }

  /** Posts one hook after the ones before it; resolves to ag's answer, or null. */
  function post(event, payload) {
    const body = {
      ...payload,
      transcriptPath: settings.conversationFile,
      ...(sidechain(payload.sessionID) ? { parentID: parents.get(payload.sessionID) } : {}),
    };
    const sent = queue.then(async () => {
      try {
        const response = await fetch(`${settings.hookUrl}/${event}`, {
          method: "POST",
          headers: { "content-type": "application/json", [settings.secretHeader]: settings.secret },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(HOOK_TIMEOUT_MS),
        });
        return response.ok ? await response.json() : null;
      } catch {
        return null; // ag away or slow: no decision, as when no hook is configured
      }
    });
    queue = sent;
    return sent;
  }

  function session(info) {
    if (!info?.id) return;
    if (!parents.has(info.id)) parents.set(info.id, info.parentID ?? null);
    write(`session:${info.id}`, { type: "session", session: info.id, parent: info.parentID ?? null });
  }

  function message(info) {
    const copied = (info.time?.created ?? startedAt) < startedAt;
    messages.set(info.id, { role: info.role, model: info.modelID ?? null, copied });
    if (!info.error) return;
    const base = { session: info.sessionID, message: info.id };
    if (info.error.name === "MessageAbortedError")
      write(`${info.id}:interrupt`, { ...base, role: "user", kind: "interrupt", text: "Interrupted" });
    else
      write(`${info.id}:error`, {
        ...base,
        role: "assistant",
        kind: "api_error",
        text: info.error.data?.message ?? info.error.name,
        error: info.error.name,
        status: info.error.data?.statusCode ?? null,
      });
  }

  function part(p) {
    const base = { session: p.sessionID, message: p.messageID };
    const model = messages.get(p.messageID)?.model ?? null;
    if (p.type === "text" && messages.get(p.messageID)?.role === "user") {
      if (p.synthetic || !p.text) return;
      return write(p.id, { ...base, role: "user", kind: "prompt", text: clip(p.text) });
    }
    if ((p.type === "text" || p.type === "reasoning") && p.time?.end) {
      const kind = p.type === "text" ? "text" : "thinking";
      return write(p.id, { ...base, role: "assistant", kind, text: clip(p.text ?? ""), model });
    }
    if (p.type === "tool") return toolPart(p, base);
    if (p.type === "step-finish" && p.tokens) {
      const t = p.tokens;
      const tokens = {
        input: t.input ?? 0,
        output: (t.output ?? 0) + (t.reasoning ?? 0),
        cacheRead: t.cache?.read ?? 0,
        cacheCreation: t.cache?.write ?? 0,
      };
      write(p.id, { ...base, type: "usage", model, tokens, reason: p.reason });
    }
  }

  function toolPart(p, base) {
    const { status, input, output, error } = p.state ?? {};
    if (status === "pending") return;
    const call = { ...base, tool: p.tool, callID: p.callID };
    write(p.id, { ...call, role: "assistant", kind: "tool_use", input: input ?? {} });
    if (status === "completed" || status === "error") {
      const text = status === "error" ? error : output;
      write(`${p.id}:result`, {
        ...call,
        role: "user",
        kind: "tool_result",
        text: clip(text ?? ""),
        isError: status === "error",
      });
    }
  }

  /** What the bus says: written down, then the events ag's state needs forwarded. */
  function onEvent(event) {
    const p = event.properties ?? {};
    switch (event.type) {
      case "session.created":
      case "session.updated":
        return session(p.info);
      case "message.updated":
        return message(p.info);
      case "message.part.updated":
        return part(p.part);
      case "session.idle":
        write(`idle:${event.id}`, {
          session: p.sessionID,
          role: "system",
          kind: "system",
          subtype: "turn_end",
        });
        return post("session.idle", p);
      case "session.status":
        return p.status?.type === "idle" ? undefined : post("session.status", p);
      case "session.error":
        // An interrupt is no failure: the turn's end is session.idle's to say.
        return p.error?.name === "MessageAbortedError" ? undefined : post("session.error", p);
      case "permission.asked":
      case "question.asked": {
        const tool = p.tool?.callID ? tools.get(p.tool.callID) : undefined;
        calls.set(p.id, { tool, callID: p.tool?.callID });
        return post(event.type, { ...p, ...(tool ? { toolName: tool } : {}) });
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected": {
        // A refused permission ends the turn, as session.idle says next: its tool does not go on.
        if (p.reply === "reject") return;
        const call = calls.get(p.requestID) ?? {};
        return post(event.type, { ...p, toolName: call.tool, callID: call.callID });
      }
    }
  }

  return {
    event: async ({ event }) => {
      try {
        onEvent(event);
      } catch {
        // Never the agent's problem.
      }
    },
    "chat.message": async (input, output) => {
      const text = (output?.parts ?? [])
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n");
      void post("chat.message", {
        sessionID: input.sessionID,
        messageID: output?.message?.id,
        agent: input.agent,
        text,
      });
    },
    "tool.execute.before": async (input, output) => {
      tools.set(input.callID, input.tool);
      const answer = await post("tool.execute.before", { ...input, args: output?.args ?? {} });
      if (answer?.decision === "deny") throw new Error(answer.reason || "denied by ag's permission policy");
    },
    "tool.execute.after": async (input) => {
      void post("tool.execute.after", { sessionID: input.sessionID, tool: input.tool, callID: input.callID });
    },
  };
}
