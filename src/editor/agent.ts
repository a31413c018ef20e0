import * as acp from "@agentclientprotocol/sdk";
import type { AgentInfo } from "../agents/index.ts";
import type { Session } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import { translated } from "./errors.ts";
import { applyOption, type Choices, configOptions, fitChoices, modeState } from "./options.ts";
import type { AgApi, EventFeed } from "./port.ts";
import { createEditorSession, type EditorSession } from "./session.ts";

/**
 * `ag acp`: ag as an ACP agent (the official SDK's agent side). Each ACP session is an ag
 * session: created at its first prompt in the editor's cwd with the choices made until then, or
 * an existing one attached by `session/load`. Delivery stays thin: every handler reads or
 * changes ag through its REST API and shapes the answer.
 */
export interface EditorAgentDeps {
  api: AgApi;
  feed: EventFeed;
  version: string;
  /** The defaults of a new session: the config's (the template's go over them). */
  defaults: Choices;
  /** What `ag acp`'s flags chose: over the config's and the template's. */
  chosen: Partial<Choices>;
  /** A template every new session starts from (`ag acp --template`). */
  templateId?: string;
  /** Models the model option offers besides the agent's default (the configured tiers). */
  models: readonly string[];
  warn(message: string): void;
}

export function createEditorAgent(deps: EditorAgentDeps): acp.AgentApp {
  const { api } = deps;
  const sessions = new Map<string, EditorSession>();
  let agents: AgentInfo[] | null = null;
  const knownAgents = async () => {
    agents ??= await api.get<AgentInfo[]>("/v1/agents");
    return agents;
  };
  let defaults: Choices | null = null;
  /** The config's choices, the template's over them, the flags' over both: asked once. */
  const defaultChoices = async (): Promise<Choices> => {
    if (defaults) return defaults;
    const template = deps.templateId
      ? await api.get<Partial<Choices>>(`/v1/templates/${encodeURIComponent(deps.templateId)}`)
      : {};
    const { agent, driver, permissionMode, model } = template;
    defaults = {
      ...deps.defaults,
      ...(agent ? { agent } : {}),
      ...(driver ? { driver } : {}),
      ...(permissionMode ? { permissionMode } : {}),
      ...(model ? { model } : {}),
      ...deps.chosen,
    };
    return defaults;
  };

  function sessionOf(id: string): EditorSession {
    const found = sessions.get(id);
    if (!found) throw new AgError("SESSION_NOT_FOUND", `no ACP session ${id} in this ag acp`);
    return found;
  }
  /** A session's choices are the editor's until its first prompt launches it. */
  function unlaunched(session: EditorSession): EditorSession {
    if (session.agId())
      throw new AgError(
        "CONFLICT",
        "the session is running: its agent, driver, permission mode and model were fixed at its launch",
      );
    return session;
  }
  async function shape(session: EditorSession) {
    const list = await knownAgents();
    return {
      modes: modeState(session.choices(), list),
      configOptions: configOptions(session.choices(), list, deps.models),
    };
  }
  function open(client: acp.AgentContext, acpId: string, cwd: string, choices: Choices): EditorSession {
    sessions.get(acpId)?.close();
    const session = createEditorSession(
      { api, feed: deps.feed, client, warn: deps.warn },
      { acpId, cwd, choices },
    );
    sessions.set(acpId, session);
    return session;
  }
  const launchBody = (session: EditorSession) => (prompt: string) => {
    const { agent, driver, permissionMode, model } = session.choices();
    return {
      workDir: session.cwd,
      prompt,
      agent,
      driver,
      permissionMode,
      ...(model ? { model } : {}),
      ...(deps.templateId ? { templateId: deps.templateId } : {}),
      reuse: false,
    };
  };

  return acp
    .agent({ name: "ag" })
    .onRequest("initialize", () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "ag", title: "ag", version: deps.version },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true },
        sessionCapabilities: { list: {} },
      },
      authMethods: [],
    }))
    .onRequest("session/new", ({ params, client }) =>
      translated(async () => {
        const choices = fitChoices(await defaultChoices(), await knownAgents());
        const session = open(client, crypto.randomUUID(), params.cwd, choices);
        return { sessionId: session.acpId, ...(await shape(session)) };
      }),
    )
    .onRequest("session/list", ({ params }) =>
      translated(async () => {
        const all = await api.get<Session[]>("/v1/sessions");
        const listed = all.filter((s) => !params.cwd || s.workDir === params.cwd);
        return {
          sessions: listed.map((s) => ({
            sessionId: s.id,
            cwd: s.workDir,
            title: s.name,
            updatedAt: s.updatedAt,
            _meta: { ag: { status: s.status, agent: s.agent, driver: s.driver } },
          })),
        };
      }),
    )
    .onRequest("session/load", ({ params, client }) =>
      translated(async () => {
        const record = await api.get<Session>(`/v1/sessions/${encodeURIComponent(params.sessionId)}`);
        const choices: Choices = {
          agent: record.agent,
          driver: record.driver,
          permissionMode: record.permissionMode,
          model: record.model,
        };
        const session = open(client, record.id, record.workDir, choices);
        await session.load(record);
        return shape(session);
      }),
    )
    .onRequest("session/set_mode", ({ params }) =>
      translated(async () => {
        const session = unlaunched(sessionOf(params.sessionId));
        session.setChoices(
          applyOption(session.choices(), await knownAgents(), deps.models, "mode", params.modeId),
        );
        return {};
      }),
    )
    .onRequest("session/set_config_option", ({ params }) =>
      translated(async () => {
        const session = unlaunched(sessionOf(params.sessionId));
        const list = await knownAgents();
        session.setChoices(applyOption(session.choices(), list, deps.models, params.configId, params.value));
        return { configOptions: configOptions(session.choices(), list, deps.models) };
      }),
    )
    .onRequest("session/prompt", ({ params }) =>
      translated(async () => {
        const session = sessionOf(params.sessionId);
        const text = promptText(params.prompt);
        if (!text.trim()) throw new AgError("VALIDATION_ERROR", "the prompt has no text");
        return session.prompt(text, launchBody(session));
      }),
    )
    .onNotification("session/cancel", async ({ params }) => {
      await sessions.get(params.sessionId)?.cancel();
    })
    .onConnect((connection) => {
      void connection.closed.then(() => {
        for (const session of sessions.values()) session.close();
      });
    });
}

/**
 * A prompt's content as the text ag types: text as it is, a resource's text and a link's address
 * after it. Images and audio are not offered (promptCapabilities): a terminal agent cannot take them.
 */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  return blocks
    .flatMap((block) => {
      if (block.type === "text") return [block.text];
      if (block.type === "resource_link") return [block.uri];
      if (block.type === "resource" && "text" in block.resource)
        return [`${block.resource.uri}:\n${block.resource.text}`];
      return [];
    })
    .join("\n\n");
}
