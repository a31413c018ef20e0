import { type SchemaOptions, type TSchema, Type } from "@sinclair/typebox";

/** A union of string literals that keeps its precise type ("a" | "b"), for enums built from arrays. */
export function literalUnion<const T extends readonly string[]>(
  values: T,
  options?: SchemaOptions,
): TSchema & { static: T[number] } {
  return Type.Unsafe<T[number]>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      options,
    ),
  );
}
