import type { Database } from "bun:sqlite";
import { AgError } from "../shared/errors.ts";
import type { StoredTemplate as Template, TemplateFields } from "./template.ts";

interface TemplateRow {
  id: string;
  name: string;
  fields: string;
  created_at: string;
  updated_at: string;
}

export interface TemplateRepo {
  insert(template: Template): void;
  get(id: string): Template | null;
  list(): Template[];
  update(template: Template): void;
  delete(id: string): boolean;
}

/** Templates as rows: the unique name in a column, the other fields as one JSON document. */
export function createTemplateRepo(db: Database): TemplateRepo {
  const insert = db.query(
    "INSERT INTO templates (id, name, fields, created_at, updated_at) VALUES ($id, $name, $fields, $createdAt, $updatedAt)",
  );
  const byId = db.query<TemplateRow, [string]>("SELECT * FROM templates WHERE id = ?");
  const all = db.query<TemplateRow, []>("SELECT * FROM templates ORDER BY name");
  const update = db.query(
    "UPDATE templates SET name = $name, fields = $fields, updated_at = $updatedAt WHERE id = $id",
  );
  const remove = db.query("DELETE FROM templates WHERE id = ?");

  return {
    insert: (t) => uniqueName(t.name, () => insert.run(toRow(t))),
    get(id) {
      const row = byId.get(id);
      return row ? toTemplate(row) : null;
    },
    list: () => all.all().map(toTemplate),
    update: (t) => uniqueName(t.name, () => update.run(toRow(t))),
    delete: (id) => remove.run(id).changes > 0,
  };
}

/** The database keeps names unique (no check-then-insert race); its refusal becomes a 409. */
function uniqueName(name: string, write: () => void): void {
  try {
    write();
  } catch (error) {
    if (String((error as Error).message).includes("UNIQUE constraint failed: templates.name")) {
      throw new AgError("CONFLICT", `a template named "${name}" already exists`);
    }
    throw error;
  }
}

function toRow(t: Template) {
  const { id, name, createdAt, updatedAt, ...rest } = t;
  return { id, name, fields: JSON.stringify(rest), createdAt, updatedAt };
}

function toTemplate(row: TemplateRow): Template {
  const fields = JSON.parse(row.fields) as Omit<TemplateFields, "name">;
  return { id: row.id, name: row.name, ...fields, createdAt: row.created_at, updatedAt: row.updated_at };
}
