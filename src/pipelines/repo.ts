import type { Database } from "bun:sqlite";
import { fromColumns } from "../shared/rows.ts";
import type { Pipeline, Stage } from "./pipeline.ts";

interface PipelineRow {
  id: string;
  name: string;
  work_dir: string;
  status: Pipeline["status"];
  stages: string;
  created_at: string;
  updated_at: string;
}

export interface PipelineRepo {
  insert(pipeline: Pipeline): void;
  save(pipeline: Pipeline): void;
  get(id: string): Pipeline | null;
  list(): Pipeline[];
  running(): Pipeline[];
}

export function createPipelineRepo(db: Database): PipelineRepo {
  const insert = db.query(
    `INSERT INTO pipelines (id, name, work_dir, status, stages, created_at, updated_at)
     VALUES ($id, $name, $workDir, $status, $stages, $createdAt, $updatedAt)`,
  );
  const save = db.query(
    "UPDATE pipelines SET status = $status, stages = $stages, updated_at = $updatedAt WHERE id = $id",
  );
  const byId = db.query<PipelineRow, [string]>("SELECT * FROM pipelines WHERE id = ?");
  const all = db.query<PipelineRow, []>("SELECT * FROM pipelines ORDER BY created_at DESC, rowid DESC");
  const running = db.query<PipelineRow, []>(
    "SELECT * FROM pipelines WHERE status IN ('pending', 'running') ORDER BY created_at",
  );
  const row = (p: Pipeline) => ({
    id: p.id,
    name: p.name,
    workDir: p.workDir,
    status: p.status,
    stages: JSON.stringify(p.stages),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  });
  return {
    insert: (p) => void insert.run(row(p)),
    save: (p) =>
      void save.run({ id: p.id, status: p.status, stages: JSON.stringify(p.stages), updatedAt: p.updatedAt }),
    get: (id) => {
      const found = byId.get(id);
      return found ? toPipeline(found) : null;
    },
    list: () => all.all().map(toPipeline),
    running: () => running.all().map(toPipeline),
  };
}

function toPipeline(r: PipelineRow): Pipeline {
  return {
    ...fromColumns(r, ["id", "name", "work_dir", "status"]),
    stages: JSON.parse(r.stages) as Stage[],
    ...fromColumns(r, ["created_at", "updated_at"]),
  };
}
