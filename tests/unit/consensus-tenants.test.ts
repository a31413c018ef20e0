import { expect, test } from "bun:test";
import { createEventBus } from "../../src/events/bus.ts";
import type { Session } from "../../src/sessions/index.ts";
import { answer, scriptedReviews } from "../helpers/consensus.ts";

test("a tenant's key sees the reviews of its own sessions only: another tenant's is not found, nor listed", async () => {
  const tenants: Record<string, string | null> = { mine: "t1", theirs: "t2", open: null };
  const lookup = (id: string) =>
    ({
      id,
      name: id,
      workDir: "/tmp",
      status: "idle",
      baseCommit: null,
      tenantId: tenants[id] ?? null,
    }) as Session;
  const reviews = scriptedReviews(createEventBus(), lookup);
  reviews.script([[answer("APPROVE", ["PASS"])]]);
  const mine = await reviews.service.start("mine", { criteria: ["ok"], reviewers: 1 }, "t1-key");
  const theirs = await reviews.service.start("theirs", { criteria: ["ok"], reviewers: 1 }, "t2-key");
  await Promise.all([reviews.service.settled(mine.id), reviews.service.settled(theirs.id)]);

  expect(reviews.service.get(mine.id, { tenantId: "t1" }).sessionId).toBe("mine");
  expect(() => reviews.service.get(theirs.id, { tenantId: "t1" })).toThrow(
    expect.objectContaining({ code: "CONSENSUS_NOT_FOUND" }),
  );
  expect(reviews.service.list(undefined, { tenantId: "t1" }).map((r) => r.sessionId)).toEqual(["mine"]);
  expect(reviews.service.list("theirs", { tenantId: "t1" })).toEqual([]);
  // The server's own token (no tenant) sees every review.
  expect(
    reviews.service
      .list()
      .map((r) => r.sessionId)
      .sort(),
  ).toEqual(["mine", "theirs"]);
  expect(reviews.service.get(theirs.id, { tenantId: null }).status).toBe("completed");
});

test("a reviewer of a tenant's session is that tenant's session: its launch is checked against the tenant's folders", async () => {
  const lookup = (id: string) =>
    ({
      id,
      name: id,
      workDir: "/tmp",
      status: "idle",
      baseCommit: null,
      tenantId: id === "mine" ? "t1" : null,
    }) as Session;
  const reviews = scriptedReviews(createEventBus(), lookup);
  reviews.script([[answer("APPROVE", ["PASS"])]]);
  const mine = await reviews.service.start("mine", { criteria: ["ok"], reviewers: 1 }, "t1-key");
  const open = await reviews.service.start("open", { criteria: ["ok"], reviewers: 1 }, "master");
  await Promise.all([reviews.service.settled(mine.id), reviews.service.settled(open.id)]);
  const owners = [...reviews.owners].map(([name, owner]) => [name.split("-")[1], owner]);
  expect(owners.sort()).toEqual([
    ["mine", { tenantId: "t1" }],
    ["open", { tenantId: null }],
  ]);
});
