import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import {
  publicTemplate,
  Template,
  TemplateDeleted,
  TemplateInput,
  TemplatePatch,
  type TemplateService,
} from "../../templates/index.ts";
import { IdParams } from "./params.ts";

const tags = ["templates"];

/** Session templates: named starting points for POST /v1/sessions {templateId}. */
export function templateRoutes(templates: TemplateService) {
  return new Elysia({ name: "routes/templates" })
    .post("/v1/templates", ({ body, status }) => status(201, publicTemplate(templates.create(body))), {
      body: TemplateInput,
      response: { 201: Template },
      detail: {
        summary: "Create a template (workDir, or sessionId to copy it from); names are unique",
        tags,
      },
    })
    .get("/v1/templates", () => templates.list().map(publicTemplate), {
      response: Type.Array(Template),
      detail: { summary: "Templates, by name", tags },
    })
    .get("/v1/templates/:id", ({ params }) => publicTemplate(templates.get(params.id)), {
      params: IdParams,
      response: Template,
      detail: { summary: "One template", tags },
    })
    .put("/v1/templates/:id", ({ params, body }) => publicTemplate(templates.update(params.id, body)), {
      params: IdParams,
      body: TemplatePatch,
      response: Template,
      detail: { summary: "Change some of a template's fields", tags },
    })
    .delete(
      "/v1/templates/:id",
      ({ params }) => {
        templates.delete(params.id);
        return { id: params.id, deleted: true as const };
      },
      { params: IdParams, response: TemplateDeleted, detail: { summary: "Delete a template", tags } },
    );
}
