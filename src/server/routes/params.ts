import { Type } from "@sinclair/typebox";
import { t } from "elysia";

/** The `:id` of a route on one thing (a session, a template, a pipeline, a review…). */
export const IdParams = Type.Object({ id: Type.String() });

/**
 * A whole number in a query string: Elysia turns the text into a number, then this validates it
 * (from `minimum`, up to `maximum` or the largest safe integer).
 */
export function wholeNumberQuery(options: {
  minimum: number;
  maximum?: number;
  default?: number;
  description?: string;
}) {
  const { minimum, maximum = Number.MAX_SAFE_INTEGER, ...rest } = options;
  return t.Numeric({ minimum, maximum, multipleOf: 1, ...rest });
}
