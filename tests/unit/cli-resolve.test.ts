import { describe, expect, test } from "bun:test";
import { pickSession } from "../../src/cli/resolve.ts";
import type { Session } from "../../src/sessions/index.ts";
import type { AgError } from "../../src/shared/errors.ts";
import { sampleSession } from "../helpers/app.ts";

function session(id: string, name: string, status: Session["status"] = "idle"): Session {
  const { windowId, paneId, hookSecret, transcriptPath, endedAt, endReason, ...rest } = sampleSession({
    id,
    name,
    status,
  });
  return rest as Session;
}

const A = session("f1313c29-0000-4000-8000-000000000001", "work-f1313c29");
const B = session("f1399999-0000-4000-8000-000000000002", "builder");
const C = session("0abc0000-0000-4000-8000-000000000003", "f1313c29-tests");
const all = [A, B, C];

function refusal(given: string, sessions: Session[] = all): AgError {
  try {
    pickSession(sessions, given);
  } catch (error) {
    return error as AgError;
  }
  throw new Error(`${given} was not refused`);
}

describe("a session is named by its id, a unique start of the id, or its name", () => {
  test("the whole id, in any case", () => {
    expect(pickSession(all, A.id).id).toBe(A.id);
    expect(pickSession(all, A.id.toUpperCase()).id).toBe(A.id);
  });

  test("a unique start of the id", () => {
    expect(pickSession(all, "f1313").id).toBe(A.id);
    expect(pickSession(all, "0abc").id).toBe(C.id);
  });

  test("its name, as ag run prints it (which looks like an id's start but is not one)", () => {
    expect(pickSession(all, "work-f1313c29").id).toBe(A.id);
    expect(pickSession(all, "builder").id).toBe(B.id);
    expect(pickSession(all, "  builder ").id).toBe(B.id);
  });

  test("an exact name beats an id prefix", () => {
    const named = session("99990000-0000-4000-8000-000000000004", "f13");
    expect(pickSession([...all, named], "f13").id).toBe(named.id);
  });

  test("a start several ids share is refused, listing them", () => {
    const error = refusal("f13");
    expect(error.code).toBe("USAGE_ERROR");
    expect(error.message).toContain("f13 is the start of 2 session ids");
    expect(error.message).toContain("f1313c29-0000 work-f1313c29 (idle)");
    expect(error.message).toContain("f1399999-0000 builder (idle)");
  });

  test("a name several sessions share: the running one, else refused with the candidates", () => {
    const old = session("77770000-0000-4000-8000-000000000005", "builder", "killed");
    expect(pickSession([...all, old], "builder").id).toBe(B.id);
    const twin = session("88880000-0000-4000-8000-000000000006", "builder", "working");
    const error = refusal("builder", [...all, twin]);
    expect(error.code).toBe("USAGE_ERROR");
    expect(error.message).toContain('2 sessions are named "builder"');
    expect(error.message).toContain("88880000-0000 builder (working)");
  });

  test("nothing matching: SESSION_NOT_FOUND, saying what was looked for", () => {
    const error = refusal("nobody");
    expect(error.code).toBe("SESSION_NOT_FOUND");
    expect(error.message).toContain("no session nobody");
    expect(refusal("").code).toBe("USAGE_ERROR");
  });
});
