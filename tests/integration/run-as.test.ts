import { describe, expect, test } from "bun:test";
import { tenantUsers } from "../../src/shared/run-as.ts";

// A tenant's runAs user looked up in the real system's user database (getent); the rest of runAs
// is tested in tests/unit/run-as.test.ts.
describe("tenants' runAs, checked at start", () => {
  test("no runAs: nobody is switched to; a user that does not exist or cannot be switched to refuses, naming the tenant", () => {
    const none = tenantUsers({ a: { root: "/srv/a" } }, { stateDir: "/tmp/x", selfCommand: ["/bin/true"] });
    expect(none("a")).toBeNull();
    expect(() =>
      tenantUsers(
        { "team-a": { root: "/srv/a", runAs: "no-such-user-ag" } },
        { stateDir: "/tmp/x", selfCommand: [] },
      ),
    ).toThrow(
      /tenantWorkdirs\.team-a\.runAs \(no-such-user-ag\): (no such OS user|ag cannot run agents as another user)/,
    );
  });
});
