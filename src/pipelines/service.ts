import type { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import type { EventBus } from "../events/bus.ts";
import type { SessionService } from "../sessions/index.ts";
import { turnEnd, validateWorkDir } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError, describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { createRuns } from "../shared/runs.ts";
import { inSpan } from "../telemetry/index.ts";
import { type CreatePipelineBody, type Pipeline, type Stage, stagePrompt } from "./pipeline.ts";
import { createPipelineRepo } from "./repo.ts";

export interface PipelineService {
  create(input: CreatePipelineBody): Pipeline;
  list(): Pipeline[];
  get(id: string): Pipeline;
  cancel(id: string): Promise<Pipeline>;
  /** Resumes the pipelines a previous run of ag left running. */
  start(): void;
  /** Resolves when the pipeline has finished (tests). */
  settled(id: string): Promise<Pipeline>;
  close(): void;
}

type Sessions = Pick<SessionService, "create" | "get" | "read" | "kill">;

/**
 * Runs pipelines: stages in order, each in a fresh session in the pipeline's workDir; a stage
 * ends when its agent's turn ends, its last assistant text is handed to the next stage under
 * `[Previous stage output]`, and its session is closed. State is saved after every step, so a
 * restart of ag picks a running pipeline up where it was.
 */
export function createPipelineService(deps: {
  db: Database;
  sessions: Sessions;
  bus: Pick<EventBus, "subscribe">;
  clock: Clock;
  logger: Logger;
  stageTimeoutMs: number;
}): PipelineService {
  const repo = createPipelineRepo(deps.db);
  const runs = createRuns<Pipeline>("pipeline", deps.logger);
  const cancelled = new Set<string>();
  const at = () => new Date(deps.clock.now()).toISOString();

  function saved(pipeline: Pipeline): Pipeline {
    pipeline.updatedAt = at();
    repo.save(pipeline);
    return pipeline;
  }

  function runStage(pipeline: Pipeline, stage: Stage, previous: string | null): Promise<string> {
    const attributes = { "ag.pipeline.id": pipeline.id, "ag.pipeline.stage": stage.index + 1 };
    return inSpan("pipeline.stage", attributes, () => runStageNow(pipeline, stage, previous));
  }

  async function runStageNow(pipeline: Pipeline, stage: Stage, previous: string | null): Promise<string> {
    if (!stage.sessionId) {
      stage.status = "running";
      stage.startedAt = at();
      saved(pipeline);
      // Each stage in a fresh session, the pipeline's own.
      const created = await deps.sessions.create(
        {
          workDir: pipeline.workDir,
          name: `${pipeline.name}-${stage.index + 1}`,
          prompt: stagePrompt(stage.prompt, previous),
          ...(stage.agent ? { agent: stage.agent } : {}),
          ...(stage.driver ? { driver: stage.driver } : {}),
          reuse: false,
        },
        undefined,
        { managedBy: `pipeline:${pipeline.id}` },
      );
      stage.sessionId = created.session.id;
      saved(pipeline);
      if (!created.promptDelivery?.delivered) throw new Error("the stage's prompt was not delivered");
    }
    const sessionId = stage.sessionId;
    const how = await turnEnd(deps, sessionId, deps.stageTimeoutMs);
    if (cancelled.has(pipeline.id)) throw new Error("cancelled");
    if (how === "timeout") throw new Error(`the stage's turn did not end within ${deps.stageTimeoutMs} ms`);
    if (how === "ended") throw new Error("the stage's session ended before its turn did");
    const { output } = await deps.sessions.read(sessionId);
    await deps.sessions.kill(sessionId).catch(() => {});
    return output;
  }

  async function run(pipeline: Pipeline): Promise<Pipeline> {
    pipeline.status = "running";
    saved(pipeline);
    let previous: string | null = null;
    for (const stage of pipeline.stages) {
      if (stage.status === "completed") {
        previous = stage.output;
        continue;
      }
      try {
        stage.output = await runStage(pipeline, stage, previous);
        stage.status = "completed";
        stage.finishedAt = at();
        previous = stage.output;
        saved(pipeline);
      } catch (error) {
        const wasCancelled = cancelled.has(pipeline.id);
        stage.status = wasCancelled ? "cancelled" : "failed";
        if (!wasCancelled) stage.error = describeError(error);
        stage.finishedAt = at();
        if (stage.sessionId) await deps.sessions.kill(stage.sessionId).catch(() => {});
        for (const rest of pipeline.stages) if (rest.status === "pending") rest.status = "cancelled";
        pipeline.status = wasCancelled ? "cancelled" : "failed";
        if (!wasCancelled)
          deps.logger.warn(`pipeline ${pipeline.name}: stage ${stage.index + 1} failed: ${stage.error}`);
        return saved(pipeline);
      }
    }
    pipeline.status = "completed";
    return saved(pipeline);
  }

  function launch(pipeline: Pipeline): void {
    runs.launch(pipeline.id, run(pipeline), pipeline, () => cancelled.delete(pipeline.id));
  }

  const service: PipelineService = {
    create(input) {
      if (input.workDir === undefined) throw missingWorkDir(input);
      const workDir = validateWorkDir(input.workDir);
      const now = at();
      const pipeline: Pipeline = {
        id: randomUUID(),
        name: input.name,
        workDir,
        status: "pending",
        stages: input.stages.map((s, index) => ({
          index,
          name: s.name ?? `stage ${index + 1}`,
          prompt: s.prompt,
          ...(s.agent ? { agent: s.agent } : {}),
          ...(s.driver ? { driver: s.driver } : {}),
          status: "pending",
          sessionId: null,
          startedAt: null,
          finishedAt: null,
          output: null,
        })),
        createdAt: now,
        updatedAt: now,
      };
      repo.insert(pipeline);
      launch(pipeline);
      return structuredClone(pipeline);
    },
    list: () => repo.list(),
    get(id) {
      const found = repo.get(id);
      if (!found) throw new AgError("PIPELINE_NOT_FOUND", `no pipeline ${id}`);
      return found;
    },
    async cancel(id) {
      const pipeline = service.get(id);
      if (pipeline.status !== "running" && pipeline.status !== "pending") {
        throw new AgError("CONFLICT", `pipeline ${id} is already ${pipeline.status}`);
      }
      cancelled.add(id);
      // Taken first: ending the stage's session ends its wait, and the run may record the
      // cancellation and be gone before the kill has closed the window.
      const run = runs.get(id);
      const current = pipeline.stages.find((s) => s.status === "running");
      if (current?.sessionId) await deps.sessions.kill(current.sessionId).catch(() => {});
      return run ? await run : service.get(id);
    },
    start() {
      for (const pipeline of repo.running()) if (!runs.has(pipeline.id)) launch(pipeline);
    },
    settled: (id) => runs.get(id) ?? Promise.resolve(service.get(id)),
    close() {
      // Runs stop with the process; their saved state is resumed at the next start.
      runs.clear();
    },
  };
  return service;
}

/**
 * SPEC's own example body has no workDir, yet a pipeline needs one and ag has no sensible
 * default: its own working directory is wherever the server happened to start, and the config
 * has no default project. So the answer says exactly what to add.
 */
function missingWorkDir(input: CreatePipelineBody): AgError {
  const example = JSON.stringify({ ...input, workDir: "/absolute/path/to/project" });
  return new AgError(
    "VALIDATION_ERROR",
    `invalid body.workDir: required, a pipeline has no default directory; give the absolute path its stages run in, e.g. ${example}`,
  );
}
