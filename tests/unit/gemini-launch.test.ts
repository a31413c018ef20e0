import { describe, expect, test } from "bun:test";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { LaunchRequest } from "../../src/agents/agent.ts";
import { geminiAcp } from "../../src/agents/gemini/acp.ts";
import { findTranscript, forkTranscript, namedMinute } from "../../src/agents/gemini/files.ts";
import { mergeSettings, stripComments } from "../../src/agents/gemini/home.ts";
import { prepareGeminiLaunch } from "../../src/agents/gemini/launch.ts";
import { launchTag } from "../../src/agents/launch-files.ts";
import { tempDir } from "../helpers/temp.ts";

/** Launching the Gemini CLI: its command, its own GEMINI_CLI_HOME, and the user's files left alone. */
const ID = "3a7d1c2e-0000-4000-8000-000000000001";

function world(userSettings?: string) {
  const home = tempDir("ag-gemini-home-");
  mkdirSync(join(home, ".gemini", "commands"), { recursive: true });
  writeFileSync(join(home, ".gemini", "oauth_creds.json"), "{}");
  if (userSettings !== undefined) writeFileSync(join(home, ".gemini", "settings.json"), userSettings);
  const request: LaunchRequest = {
    sessionId: ID,
    workDir: "/work/project",
    permissionMode: "default",
    agentCommand: null,
    sessionDir: join(tempDir(), "session"),
    hookUrl: "http://127.0.0.1:7777/v1/hooks/gemini",
    hookSecret: "secret-abc",
    env: { EXTRA: "1" },
  };
  const env = { home, dataDir: null, trustWorkdir: true, selfCommand: ["/opt/ag"], isRoot: false };
  return { home, request, env };
}

describe("prepareGeminiLaunch", () => {
  test("the command: ag's session id, the approval mode; the environment: its own GEMINI_CLI_HOME", async () => {
    const { request, env } = world();
    const plan = await prepareGeminiLaunch({ ...request, permissionMode: "acceptEdits" }, env);
    expect(plan.command).toEqual(["gemini", "--session-id", ID, "--approval-mode", "auto_edit"]);
    const root = join(request.sessionDir, `gemini-${launchTag("secret-abc")}`);
    expect(plan.env).toEqual({
      EXTRA: "1",
      SVC_SESSION_ID: ID,
      GEMINI_CLI_HOME: root,
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    });
    expect(plan.warnings).toEqual([]);
    for (const [mode, flag] of [
      ["default", "default"],
      ["bypassPermissions", "yolo"],
      ["plan", "plan"],
    ] as const)
      expect((await prepareGeminiLaunch({ ...request, permissionMode: mode }, env)).command.at(-1)).toBe(
        flag,
      );
    await expect(prepareGeminiLaunch({ ...request, permissionMode: "dontAsk" }, env)).rejects.toThrow(
      "no dontAsk",
    );
  });

  test("the session's .gemini: the user's settings with ag's hooks after theirs; every other entry a link", async () => {
    const user = `{
      // the user's own
      "model": { "name": "gemini-2.5-pro" },
      "general": { "vimMode": true, "sessionRetention": { "enabled": true, "maxAge": "7d" } },
      "hooks": { "BeforeTool": [{ "matcher": "x", "hooks": [{ "type": "command", "command": "mine" }] }] }
    }`;
    const { home, request, env } = world(user);
    const plan = await prepareGeminiLaunch(request, env);
    const own = join(plan.env.GEMINI_CLI_HOME!, ".gemini");
    const settings = JSON.parse(readFileSync(join(own, "settings.json"), "utf8"));
    expect(settings.model).toEqual({ name: "gemini-2.5-pro" });
    expect(settings.general).toEqual({ vimMode: true, sessionRetention: { enabled: false, maxAge: "7d" } });
    expect(settings.hooksConfig).toEqual({ enabled: true, notifications: false });
    expect(settings.hooks.BeforeTool.map((h: { matcher: string }) => h.matcher)).toEqual(["x", "*"]);
    const secretFile = join(request.sessionDir, `hook-secret-${launchTag("secret-abc")}`);
    expect(settings.hooks.AfterAgent[0].hooks[0].command).toBe(
      `/opt/ag hook AfterAgent --url http://127.0.0.1:7777/v1/hooks/gemini/AfterAgent --secret-file ${secretFile}`,
    );
    expect(readFileSync(secretFile, "utf8")).toBe("secret-abc");
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    for (const entry of ["oauth_creds.json", "commands", "tmp"]) {
      expect(lstatSync(join(own, entry)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(own, entry))).toBe(join(home, ".gemini", entry));
    }
    // The user's own settings file is as it was.
    expect(readFileSync(join(home, ".gemini", "settings.json"), "utf8")).toBe(user);
  });

  test("a user's settings that cannot be read: ag's alone, and a warning", async () => {
    const { request, env } = world("{ not json");
    const plan = await prepareGeminiLaunch(request, env);
    expect(plan.warnings[0]).toContain("could not be read");
    expect(
      JSON.parse(readFileSync(join(plan.env.GEMINI_CLI_HOME!, ".gemini", "settings.json"), "utf8")).hooks,
    ).toBeDefined();
  });

  test("without trustWorkdir the folder-trust dialog is left to the user", async () => {
    const { request, env } = world();
    const plan = await prepareGeminiLaunch(request, { ...env, trustWorkdir: false });
    expect(plan.env.GEMINI_CLI_TRUST_WORKSPACE).toBeUndefined();
    expect(plan.warnings).toEqual([
      "folder trust is not pre-accepted: the trust dialog is a permission prompt of kind trust",
    ]);
  });

  test("resume by the conversation's id; fork as a copy under the new id; an agentCommand's own flags first", async () => {
    const { home, request, env } = world();
    const chats = join(home, ".gemini", "tmp", "project", "chats");
    mkdirSync(chats, { recursive: true });
    const parentId = "9b9b9b9b-0000-4000-8000-000000000009";
    const parentFile = join(chats, "session-2026-01-01T10-00-9b9b9b9b.jsonl");
    writeFileSync(
      parentFile,
      `${JSON.stringify({ sessionId: parentId, projectHash: "h", startTime: "2026-01-01T10:00:00Z" })}\n` +
        `${JSON.stringify({ id: "m1", type: "user", content: [{ text: "hi" }] })}\n`,
    );
    const resumed = await prepareGeminiLaunch(
      { ...request, resume: { conversationId: parentId, fork: false } },
      env,
    );
    expect(resumed.command.slice(0, 3)).toEqual(["gemini", "--resume", parentId]);
    const forked = await prepareGeminiLaunch(
      {
        ...request,
        agentCommand: "gemini -m 'gemini-2.5-pro'",
        resume: { conversationId: parentId, fork: true },
      },
      env,
    );
    expect(forked.command.slice(0, 5)).toEqual(["gemini", "-m", "gemini-2.5-pro", "--resume", ID]);
    const copy = await findTranscript(join(home, ".gemini"), ID);
    expect(copy).not.toBe(parentFile);
    const lines = readFileSync(copy!, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ sessionId: ID, projectHash: "h" });
    expect(lines[1]).toEqual({ id: "m1", type: "user", content: [{ text: "hi" }] });
    expect(lines.at(-1)).toEqual({ $set: { sessionId: ID } });
    await expect(
      prepareGeminiLaunch({ ...request, resume: { conversationId: "0000aaaa-none", fork: true } }, env),
    ).rejects.toThrow("no Gemini session file");
  });
});

describe("where a session's file is", () => {
  test("by the whole id in its header (the name has 8 of its characters); the oldest of a resume's files", async () => {
    const dir = tempDir();
    const chats = join(dir, "tmp", "proj", "chats");
    mkdirSync(chats, { recursive: true });
    const id = "5c5c5c5c-0000-4000-8000-000000000005";
    const write = (name: string, sessionId: string, startTime: string) =>
      writeFileSync(join(chats, name), `${JSON.stringify({ sessionId, startTime })}\n`);
    write("session-2026-01-02T09-00-5c5c5c5c.jsonl", "5c5c5c5c-other", "2026-01-02T09:00:00Z");
    write("session-2026-01-02T10-00-5c5c5c5c.jsonl", id, "2026-01-02T10:00:00Z");
    write("session-2026-01-02T11-00-5c5c5c5c.jsonl", id, "2026-01-02T11:00:00Z"); // left by --resume
    expect(await findTranscript(dir, id)).toBe(join(chats, "session-2026-01-02T10-00-5c5c5c5c.jsonl"));
    expect(await findTranscript(dir, "7e7e7e7e-0000-4000-8000-000000000007")).toBeNull();
    await expect(findTranscript(dir, "../etc")).rejects.toThrow("invalid agent session id");
  });

  test("session/load: a conversation's file named after this minute is named after the one before, else the load waits", async () => {
    const { home, env } = world();
    const chats = join(home, ".gemini", "tmp", "proj", "chats");
    mkdirSync(chats, { recursive: true });
    const name = "session-2026-01-02T10-07-5c5c5c5c.jsonl";
    expect(namedMinute(join(chats, name))).toBe(Date.parse("2026-01-02T10:07:00Z"));
    expect(namedMinute(join(chats, "notes.jsonl"))).toBeNull();
    const id = "5c5c5c5c-0000-4000-8000-000000000005";
    const conversation = `${JSON.stringify({ sessionId: id, startTime: "2026-01-02T10:07:41Z" })}\n`;
    writeFileSync(join(chats, name), conversation);
    // A later file of the id (an earlier load's own recording) does not move the minute.
    const later = "session-2026-01-02T10-09-5c5c5c5c.jsonl";
    writeFileSync(
      join(chats, later),
      `${JSON.stringify({ sessionId: id, startTime: "2026-01-02T10:09:02Z" })}\n`,
    );
    const entry = geminiAcp(env);
    const files = () => readdirSync(chats).sort();

    // A minute later: at once, nothing renamed.
    expect(await entry.prepareLoad?.(id, Date.parse("2026-01-02T10:08:00Z"))).toBe(0);
    expect(files()).toEqual([name, later]);
    // Within its minute: named after 10:06, the same conversation; at once.
    expect(await entry.prepareLoad?.(id, Date.parse("2026-01-02T10:07:59Z"))).toBe(0);
    const moved = "session-2026-01-02T10-06-5c5c5c5c.jsonl";
    expect(files()).toEqual([moved, later]);
    expect(readFileSync(join(chats, moved), "utf8")).toBe(conversation);
    expect(await findTranscript(join(home, ".gemini"), id)).toBe(join(chats, moved));

    // The name before taken (another conversation of the same 8 characters): nothing written
    // over, nothing renamed; the load waits for the minute after the file's.
    const other = `${JSON.stringify({ sessionId: "5c5c5c5c-other", startTime: "2026-01-02T10:05:30Z" })}\n`;
    writeFileSync(join(chats, "session-2026-01-02T10-05-5c5c5c5c.jsonl"), other);
    expect(await entry.prepareLoad?.(id, Date.parse("2026-01-02T10:06:30Z"))).toBe(
      Date.parse("2026-01-02T10:07:00Z"),
    );
    expect(readFileSync(join(chats, "session-2026-01-02T10-05-5c5c5c5c.jsonl"), "utf8")).toBe(other);
    expect(readFileSync(join(chats, moved), "utf8")).toBe(conversation);
    // No file of the id: at once (the load says what it finds).
    expect(await entry.prepareLoad?.("7e7e7e7e-0000-4000-8000-000000000007", Date.now())).toBe(0);
  });

  test("a fork never writes over its parent", () => {
    const dir = tempDir();
    const parent = join(dir, "session-2026-01-02T10-00-5c5c5c5c.jsonl");
    writeFileSync(parent, `${JSON.stringify({ sessionId: "5c5c5c5c-1" })}\n`);
    expect(() => forkTranscript(parent, "5c5c5c5c-2", new Date("2026-01-02T10:00:30Z"))).toThrow(
      "an id of its own",
    );
  });
});

describe("the settings merge", () => {
  test("comments go, strings stay; ag's keys one level down over the user's", () => {
    expect(JSON.parse(stripComments('{"a": "http://x // y", /* c */ "b": 1 // d\n}'))).toEqual({
      a: "http://x // y",
      b: 1,
    });
    expect(
      mergeSettings({ ui: { theme: "x" }, general: { a: 1 } }, { general: { b: 2 }, hooks: { E: [2] } }),
    ).toEqual({
      ui: { theme: "x" },
      general: { a: 1, b: 2 },
      hooks: { E: [2] },
    });
  });
});
