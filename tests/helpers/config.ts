import { expect } from "bun:test";
import { AgError } from "../../src/shared/errors.ts";

/** The CONFIG_INVALID error `run` throws (the test fails when it throws nothing or another). */
export function configError(run: () => unknown): AgError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    expect((error as AgError).code).toBe("CONFIG_INVALID");
    return error as AgError;
  }
  throw new Error("expected a CONFIG_INVALID error");
}
