import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { CreatePipelineBody, Pipeline, type PipelineService } from "../../pipelines/index.ts";
import { IdParams } from "./params.ts";

const tags = ["pipelines"];

/** Pipelines: prompts run in order, each stage in a fresh session, outputs handed on. */
export function pipelineRoutes(pipelines: PipelineService) {
  return new Elysia({ name: "routes/pipelines" })
    .post("/v1/pipelines", ({ body, status }) => status(201, pipelines.create(body)), {
      body: CreatePipelineBody,
      response: { 201: Pipeline },
      detail: { summary: "Start a pipeline: its stages run in order, each in a fresh session", tags },
    })
    .get("/v1/pipelines", () => pipelines.list(), {
      response: Type.Array(Pipeline),
      detail: { summary: "Pipelines, newest first", tags },
    })
    .get("/v1/pipelines/:id", ({ params }) => pipelines.get(params.id), {
      params: IdParams,
      response: Pipeline,
      detail: { summary: "A pipeline and the state of each stage", tags },
    })
    .delete("/v1/pipelines/:id", ({ params }) => pipelines.cancel(params.id), {
      params: IdParams,
      response: Pipeline,
      detail: {
        summary: "Cancel a pipeline: its running stage's session is closed, the rest never start",
        tags,
      },
    });
}
