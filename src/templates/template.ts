import { type Static, Type } from "@sinclair/typebox";
import { HandoffPolicy, PermissionMode } from "../config/schema.ts";
import {
  AgentEnv,
  AgentId,
  BudgetInput,
  Driver,
  HibernateSetting,
  MemoryKeys,
  ModelName,
  StallThreshold,
} from "../sessions/index.ts";

/** SPEC's template fields: what a session created from it starts with. */
const fields = {
  name: Type.String({ minLength: 1, maxLength: 128, description: "unique" }),
  description: Type.Optional(Type.String({ maxLength: 4096 })),
  workDir: Type.Optional(
    Type.String({ minLength: 1, description: "absolute path of an existing directory" }),
  ),
  prompt: Type.Optional(Type.String({ description: "initial prompt" })),
  agent: Type.Optional(AgentId),
  driver: Type.Optional(Driver),
  agentCommand: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  env: Type.Optional(AgentEnv),
  stallThresholdMs: Type.Optional(StallThreshold),
  permissionMode: Type.Optional(PermissionMode),
  model: Type.Optional(ModelName),
  autoApprove: Type.Optional(
    Type.Boolean({ description: "sessions run with bypassPermissions unless permissionMode is set" }),
  ),
  memoryKeys: Type.Optional(MemoryKeys),
  budget: Type.Optional(BudgetInput),
  handoff: Type.Optional(HandoffPolicy),
  hibernate: Type.Optional(HibernateSetting),
};

const sessionId = Type.Optional(
  Type.String({
    minLength: 1,
    description: "copy workDir, stallThresholdMs, permissionMode, model, agent and driver from this session",
  }),
);

export const TemplateInput = Type.Object({ ...fields, sessionId }, { additionalProperties: false });
export type TemplateInput = Static<typeof TemplateInput>;

export const TemplatePatch = Type.Partial(TemplateInput, { additionalProperties: false });
export type TemplatePatch = Static<typeof TemplatePatch>;

const { name: _name, env: _env, ...optional } = fields;
/** A template as the API returns it: environment values may be secrets, so only names show. */
export const Template = Type.Object({
  id: Type.String(),
  name: fields.name,
  ...optional,
  envKeys: Type.Optional(
    Type.Array(Type.String(), { description: "names of the env variables; values are never returned" }),
  ),
  workDir: Type.String(),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
});
export type Template = Static<typeof Template>;

/** A template as stored: env values included. */
export type StoredTemplate = Omit<Template, "envKeys"> & { env?: Record<string, string> };

/** The stored part: every field but the bookkeeping. */
export type TemplateFields = Omit<StoredTemplate, "id" | "createdAt" | "updatedAt">;

export function publicTemplate(stored: StoredTemplate): Template {
  const { env, ...rest } = stored;
  return env && Object.keys(env).length ? { ...rest, envKeys: Object.keys(env) } : rest;
}

export const TemplateDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
