/**
 * Rows to records: SQLite columns are snake_case, ag's records camelCase. The plain part of every
 * repo's row → record mapping (a column's value under its camelCase name) is done here once; a
 * repo writes out only the columns it parses or folds (JSON, 0/1 flags, grouped fields).
 */

/** `work_dir` → `workDir`, at the type level. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** The named columns of a row under their camelCase names, their values as they are. */
export type Camelized<Row, Column extends keyof Row & string> = {
  [K in Column as CamelCase<K>]: Row[K];
};

/** `column` under its camelCase name. */
export function camelCase<S extends string>(column: S): CamelCase<S> {
  return column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()) as CamelCase<S>;
}

/** The `columns` of `row`, in that order, each under its camelCase name with its value as it is. */
export function fromColumns<Row extends object, Column extends keyof Row & string>(
  row: Row,
  columns: readonly Column[],
): Camelized<Row, Column> {
  const record: Record<string, unknown> = {};
  for (const column of columns) record[camelCase(column)] = row[column];
  return record as Camelized<Row, Column>;
}

/** Every column of `row` under its camelCase name: for a table whose columns are the record's fields. */
export function camelize<Row extends object>(row: Row): Camelized<Row, keyof Row & string> {
  return fromColumns(row, Object.keys(row) as (keyof Row & string)[]);
}
