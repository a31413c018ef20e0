import type { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import type { SessionService, TemplateReader } from "../sessions/index.ts";
import { normalizeText, validateWorkDir } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import { createTemplateRepo, type TemplateRepo } from "./repo.ts";
import type { StoredTemplate as Template, TemplateInput, TemplatePatch } from "./template.ts";

export interface TemplateService extends TemplateReader {
  create(input: TemplateInput): Template;
  list(): Template[];
  get(id: string): Template;
  update(id: string, patch: TemplatePatch): Template;
  delete(id: string): void;
}

export function createTemplateService(deps: {
  db: Database;
  clock: Clock;
  sessions: Pick<SessionService, "get">;
  /** Where the templates live: the SQLite table of `db` unless given (a fleet's, docs/fleet.md). */
  repo?: TemplateRepo;
}): TemplateService {
  const repo = deps.repo ?? createTemplateRepo(deps.db);

  /** `sessionId` supplies workDir, stallThresholdMs, permissionMode, model, agent and driver where the input does not. */
  function withSession<T extends TemplatePatch>(input: T): Omit<T, "sessionId"> {
    const { sessionId, ...fields } = input;
    // A template's prompt is typed into sessions: the same limits as a prompt, checked now.
    if (fields.prompt !== undefined) fields.prompt = normalizeText(fields.prompt, "prompt");
    if (sessionId === undefined) return fields;
    const session = deps.sessions.get(sessionId);
    return {
      workDir: session.workDir,
      stallThresholdMs: session.stallThresholdMs,
      permissionMode: session.permissionMode,
      ...(session.model === null ? {} : { model: session.model }),
      agent: session.agent,
      driver: session.driver,
      ...fields,
    };
  }

  const service: TemplateService = {
    create(input) {
      const fields = withSession(input);
      if (fields.workDir === undefined) {
        throw new AgError("VALIDATION_ERROR", "invalid body.workDir: required unless sessionId is given");
      }
      const workDir = validateWorkDir(fields.workDir);
      const at = new Date(deps.clock.now()).toISOString();
      const template: Template = {
        id: randomUUID(),
        ...fields,
        workDir,
        createdAt: at,
        updatedAt: at,
      };
      repo.insert(template);
      return template;
    },
    list: () => repo.list(),
    get(id) {
      const template = repo.get(id);
      if (!template) throw new AgError("TEMPLATE_NOT_FOUND", `no template ${id}`);
      return template;
    },
    update(id, patch) {
      const current = service.get(id);
      const fields = withSession(patch);
      if (fields.workDir !== undefined) fields.workDir = validateWorkDir(fields.workDir);
      const next: Template = { ...current, ...fields, updatedAt: new Date(deps.clock.now()).toISOString() };
      repo.update(next);
      return next;
    },
    delete(id) {
      if (!repo.delete(id)) throw new AgError("TEMPLATE_NOT_FOUND", `no template ${id}`);
    },
    defaults(id) {
      const {
        id: _,
        name: _name,
        description: _d,
        createdAt: _c,
        updatedAt: _u,
        ...defaults
      } = service.get(id);
      return defaults;
    },
  };
  return service;
}
