import { describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  asUser,
  cannotSwitchUsers,
  closedTo,
  handOver,
  permits,
  type RunAs,
  reclaim,
} from "../../src/shared/run-as.ts";
import { tempDir } from "../helpers/temp.ts";

/** A user that exists nowhere: only its ids matter to these checks. */
const user: RunAs = {
  name: "tenant-user",
  uid: 4242,
  gid: 4343,
  groups: [4343, 4444],
  home: "/home/tenant-user",
  setpriv: "/usr/bin/setpriv",
};

const status = (capEff: string) => `Name:\tag\nCapInh:\t0000000000000000\nCapEff:\t${capEff}\n`;

describe("who may switch users", () => {
  test("root with every capability it needs may; not root, or root without one, may not, and says why", () => {
    expect(cannotSwitchUsers(0, status("000001ffffffffff"))).toBeNull();
    expect(cannotSwitchUsers(1000, status("000001ffffffffff"))).toContain("uid 1000, not root");
    // CAP_SETUID (bit 7) and CAP_CHOWN (bit 0) dropped.
    expect(cannotSwitchUsers(0, status("000001ffffffff7e"))).toBe(
      "ag runs as root without CAP_CHOWN, CAP_SETUID",
    );
    expect(cannotSwitchUsers(0, "Name:\tag\n")).toContain("cannot be read");
  });
});

describe("what a user can reach", () => {
  test("owner, group (supplementary too) and other bits, each for its own", () => {
    expect(permits(user, { uid: 4242, gid: 0, mode: 0o700 }, 0o1)).toBe(true);
    expect(permits(user, { uid: 4242, gid: 4444, mode: 0o070 }, 0o1)).toBe(false);
    expect(permits(user, { uid: 0, gid: 4444, mode: 0o710 }, 0o1)).toBe(true);
    expect(permits(user, { uid: 0, gid: 4444, mode: 0o710 }, 0o4)).toBe(false);
    expect(permits(user, { uid: 0, gid: 0, mode: 0o711 }, 0o1)).toBe(true);
    expect(permits(user, { uid: 0, gid: 0, mode: 0o700 }, 0o1)).toBe(false);
  });

  test("the first folder on the way it cannot pass", () => {
    const top = tempDir();
    chmodSync(top, 0o711);
    const closed = join(top, "closed");
    mkdirSync(join(closed, "inner"), { recursive: true });
    chmodSync(closed, 0o700);
    expect(closedTo(user, join(closed, "inner", "file"))).toBe(closed);
    expect(closedTo(user, join(top, "file"))).toBeNull();
    expect(closedTo(user, closed, true)).toBe(closed);
    expect(closedTo(user, join(top, "missing", "file"))).toBe(join(top, "missing"));
  });
});

describe("a program started as a tenant's user", () => {
  test("without one: argv and environment as they were", () => {
    expect(asUser(null, ["claude", "--x"], { PATH: "/bin" })).toEqual({
      command: ["claude", "--x"],
      env: { PATH: "/bin" },
    });
  });

  test("with one: behind setpriv (ids only on argv), with the user's HOME, USER and LOGNAME", () => {
    const { command, env } = asUser(user, ["/bin/sh", "-c", "true"], {
      PATH: "/bin",
      HOME: "/root",
      KEEP: "1",
    });
    expect(command).toEqual([
      "/usr/bin/setpriv",
      "--reuid=4242",
      "--regid=4343",
      "--init-groups",
      "--",
      "/bin/sh",
      "-c",
      "true",
    ]);
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/home/tenant-user",
      USER: "tenant-user",
      LOGNAME: "tenant-user",
      KEEP: "1",
    });
  });

  test("a program the user cannot reach is refused, naming the folder closed to it", () => {
    const dir = tempDir();
    const program = join(dir, "agent");
    writeFileSync(program, "#!/bin/sh\n", { mode: 0o755 });
    expect(() => asUser(user, [program], { PATH: "/bin" })).toThrow(`the folder ${dir} is closed to it`);
    chmodSync(dir, 0o711);
    expect(asUser(user, [program], { PATH: "/bin" }).command.at(-1)).toBe(program);
    // Found on PATH, and through a link whose target is closed.
    const bin = tempDir();
    chmodSync(bin, 0o755);
    chmodSync(dir, 0o700);
    symlinkSync(program, join(bin, "agent"));
    expect(() => asUser(user, ["agent"], { PATH: bin })).toThrow(`cannot run ${program}`);
  });
});

describe.skipIf(process.getuid?.() !== 0)("a session folder handed to the user (root only)", () => {
  test("the folder stays root's (0710, the user's group); its files and folders become the user's, but ag's own", () => {
    const dir = join(tempDir(), "session");
    mkdirSync(join(dir, "home", ".gemini"), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "settings-1.json"), "{}", { mode: 0o600 });
    writeFileSync(join(dir, "acp-transcript.jsonl"), "", { mode: 0o600 });
    handOver(user, dir, ["acp-transcript.jsonl"]);
    expect(statSync(dir)).toMatchObject({ uid: 0, gid: user.gid });
    expect(statSync(dir).mode & 0o777).toBe(0o710);
    expect(statSync(join(dir, "settings-1.json"))).toMatchObject({ uid: user.uid, gid: user.gid });
    expect(statSync(join(dir, "settings-1.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "home", ".gemini")).uid).toBe(user.uid);
    expect(statSync(join(dir, "acp-transcript.jsonl")).uid).toBe(0);
    // Before the next launch writes there again: the user's folders go, files stay.
    reclaim(user, dir);
    expect(() => lstatSync(join(dir, "home"))).toThrow();
    expect(statSync(join(dir, "settings-1.json")).isFile()).toBe(true);
  });
});
