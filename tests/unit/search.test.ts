import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeTranscriptFormat } from "../../src/agents/claude/transcript.ts";
import { hitLines, parseHit, sessionOfHit } from "../../src/cli/hits.ts";
import {
  createSearchStore,
  createSourceIndexer,
  REDACTED,
  redact,
  type SearchStore,
  snippetOf,
  toMatchExpression,
  toTurn,
} from "../../src/search/index.ts";
import { isAgError } from "../../src/shared/errors.ts";
import { openDatabase } from "../../src/store/db.ts";
import { SEARCH_MIGRATIONS } from "../../src/store/migrations.ts";
import { tempDir } from "../helpers/temp.ts";

function codeOf(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return isAgError(error) ? error.code : "not an AgError";
  }
}

describe("the query builder", () => {
  test("words, phrases, prefixes and OR become quoted FTS5 terms", () => {
    expect(toMatchExpression("flaky test")).toBe('"flaky" "test"');
    expect(toMatchExpression('"the flaky test" fix*')).toBe('"the flaky test" "fix"*');
    expect(toMatchExpression('"flaky te"*')).toBe('"flaky te"*');
    expect(toMatchExpression("tmux OR screen")).toBe('"tmux" OR "screen"');
  });

  test("FTS5 syntax in the input is only text", () => {
    expect(toMatchExpression("NEAR(a b) col:x ^start -not AND")).toBe(
      '"NEAR(a" "b)" "col:x" "^start" "-not" "AND"',
    );
    expect(toMatchExpression('say "he said ""hi"""')).toBe('"say" "he said " "hi"');
    // A dangling or doubled OR is dropped, not an FTS5 syntax error.
    expect(toMatchExpression("OR a OR OR b OR")).toBe('"a" OR "b"');
  });

  test("no words or an unclosed quote is SEARCH_QUERY_INVALID", () => {
    for (const bad of ["   ", "*", "-- ::", 'open "phrase', "OR"])
      expect(codeOf(() => toMatchExpression(bad))).toBe("SEARCH_QUERY_INVALID");
  });
});

describe("redaction", () => {
  test("keys, tokens and .env-style assignments are redacted", () => {
    const cases: Array<[string, string]> = [
      ["key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv done", `key ${REDACTED} done`],
      ["OPENAI_API_KEY=sk-proj-0123456789abcdefXYZ", `OPENAI_API_KEY=${REDACTED}`],
      ["export DB_PASSWORD='hunter2hunter2'", `export DB_PASSWORD='${REDACTED}'`],
      ['{"api_key": "abc123def456ghi"}', `{"api_key": "${REDACTED}"}`],
      ["Authorization: Bearer abcdefghijklmnop0123456789", `Authorization: Bearer ${REDACTED}`],
      ["aws AKIAIOSFODNN7EXAMPLE here", `aws ${REDACTED} here`],
      ["gh ghp_0123456789abcdefghijABCDEFGHIJ", `gh ${REDACTED}`],
      ["slack xoxb-1234567890-abcdefghij", `slack ${REDACTED}`],
    ];
    for (const [text, redacted] of cases) expect(redact(text)).toBe(redacted);
  });

  test("ordinary prose is left alone", () => {
    const prose = "The token count was 1234 and the author fixed the flaky test in secret.ts";
    expect(redact(prose)).toBe(prose);
  });
});

describe("snippets", () => {
  const mark = (word: string) => `\u0002${word}\u0003`;

  test("a window around the first match, matches marked, cut with ellipses", () => {
    const long = `${"alpha ".repeat(100)}the ${mark("flaky")} test${" omega".repeat(100)}`;
    const parts = snippetOf(long);
    expect(parts[0]?.text.startsWith("…alpha")).toBe(true);
    expect(parts.at(-1)?.text.endsWith("omega…")).toBe(true);
    expect(parts.filter((p) => p.hit).map((p) => p.text)).toEqual(["flaky"]);
    expect(parts.map((p) => p.text).join("").length).toBeLessThan(300);
  });

  test("no piece of a secret shows, wherever the window cuts", () => {
    const secret = `sk-ant-api03-${"x".repeat(300)}`;
    for (const marked of [
      `${mark("deploy")} with ${secret} now`,
      `${secret} ${mark("deploy")}`,
      `token=${"y".repeat(400)} ${mark("deploy")}`,
    ]) {
      const text = snippetOf(marked)
        .map((p) => p.text)
        .join("");
      expect(text).toContain("deploy");
      expect(text).not.toMatch(/xxx|yyy/);
    }
    expect(snippetOf(`${mark("deploy")} with ${secret} now`, 1000).map((p) => p.text)).toEqual([
      "deploy",
      ` with ${REDACTED} now`,
    ]);
  });

  test("a match inside a secret shows as one redacted hit", () => {
    const parts = snippetOf(`key ${mark("sk")}-abcdefghijklmnopqrstuvwxyz end`);
    expect(parts).toEqual([
      { text: "key ", hit: false },
      { text: REDACTED, hit: true },
      { text: " end", hit: false },
    ]);
  });
});

describe("turn parts", () => {
  const base = { id: 3, role: "user" as const, timestamp: "2026-11-22T06:51:35Z", uuid: null };
  test("prompts, answers and tools are indexed; thinking and bookkeeping are not", () => {
    expect(toTurn({ ...base, kind: "prompt", text: "fix it" })).toEqual({
      messageId: 3,
      role: "prompt",
      at: "2026-11-22T06:51:35.000Z",
      text: "fix it",
    });
    expect(toTurn({ ...base, role: "assistant", kind: "text", text: "done" })?.role).toBe("answer");
    expect(
      toTurn({ ...base, role: "assistant", kind: "tool_use", text: '{"command":"ls"}', toolName: "Bash" })
        ?.text,
    ).toBe('Bash {"command":"ls"}');
    expect(toTurn({ ...base, role: "assistant", kind: "thinking", text: "hmm" })).toBeNull();
    expect(toTurn({ ...base, role: "system", kind: "system", text: "x" })).toBeNull();
    expect(toTurn({ ...base, kind: "prompt", text: "   " })).toBeNull();
  });
});

describe("the index (in-memory SQLite)", () => {
  function store(): SearchStore {
    const s = createSearchStore(openDatabase(":memory:", SEARCH_MIGRATIONS));
    const source = (id: string, agent: string, workDir: string, tenantId: string | null) =>
      s.upsertSource({
        id,
        origin: "session",
        agent,
        host: "here",
        workDir,
        tenantId,
        status: "idle",
        conversationId: null,
        title: id,
        path: `/t/${id}`,
      });
    source("a", "claude", "/w/app", null);
    source("b", "codex", "/w/app/sub", "t1");
    source("c", "claude", "/w/application", null);
    s.addTurns("a", [
      { messageId: 1, role: "prompt", at: "2026-01-01T00:00:00.000Z", text: "fix the flaky test" },
      { messageId: 2, role: "answer", at: "2026-01-01T00:01:00.000Z", text: "flaky flaky flaky: fixed" },
    ]);
    s.addTurns("b", [{ messageId: 1, role: "tool", at: "2026-02-01T00:00:00.000Z", text: "Bash flaky.sh" }]);
    s.addTurns("c", [{ messageId: 7, role: "prompt", at: "2026-03-01T00:00:00.000Z", text: "a flaky one" }]);
    return s;
  }
  const ids = (rows: ReturnType<SearchStore["match"]>) => rows.map((r) => `${r.id}#${r.messageId}`);

  test("BM25 ranks the turn that says it most first", () => {
    expect(ids(store().match('"flaky"', {}, 10))[0]).toBe("a#2");
  });

  test("filters: agent, role, tenant, time, folder (and below, not a sibling prefix), sessions", () => {
    const s = store();
    expect(ids(s.match('"flaky"', { agent: "codex" }, 10))).toEqual(["b#1"]);
    expect(ids(s.match('"flaky"', { role: "prompt" }, 10)).sort()).toEqual(["a#1", "c#7"]);
    expect(ids(s.match('"flaky"', { tenantId: "t1" }, 10))).toEqual(["b#1"]);
    expect(
      ids(s.match('"flaky"', { since: "2026-01-15T00:00:00Z", until: "2026-02-15T00:00:00Z" }, 10)),
    ).toEqual(["b#1"]);
    expect(ids(s.match('"flaky"', { workDir: "/w/app/" }, 10)).sort()).toEqual(["a#1", "a#2", "b#1"]);
    expect(ids(s.match('"flaky"', { sessionIds: ["c"] }, 10))).toEqual(["c#7"]);
    expect(ids(s.match('"flaky"', { sessionIds: [] }, 10))).toEqual([]);
  });

  test("turns forgotten from a message on are gone from the index", () => {
    const s = store();
    s.forgetFrom("a", 2);
    expect(ids(s.match('"fixed"', {}, 10))).toEqual([]);
    expect(ids(s.match('"fix"', {}, 10))).toEqual(["a#1"]);
    s.remove("a");
    expect(s.counts()).toEqual({ sources: 2, external: 0, turns: 2 });
  });
});

describe("a hit on the command line", () => {
  test("`<session>#<id>` and `<agent>:<conversation>#<id>` are hits; anything else is a session name", () => {
    expect(parseHit("0b5e55ed-1#12")).toEqual({ source: "0b5e55ed-1", messageId: 12, isSession: true });
    expect(parseHit("claude:5ea2c400#3")).toEqual({
      source: "claude:5ea2c400",
      messageId: 3,
      isSession: false,
    });
    for (const notAHit of ["greeter", "a#", "#3", "a#0", "a#1.5", "a b#2", `a#${"9".repeat(20)}`])
      expect(parseHit(notAHit)).toBeNull();
    expect(codeOf(() => sessionOfHit(parseHit("claude:x#1")!, "read"))).toBe("USAGE_ERROR");
  });

  test("a hit prints as where it is, then its snippet on one line", () => {
    const [head, snippet] = hitLines(
      {
        hit: "s1#4",
        origin: "session",
        sessionId: "s1",
        conversationId: null,
        title: "greeter",
        agent: "claude",
        host: "here",
        workDir: "/w",
        tenantId: null,
        status: "idle",
        messageId: 4,
        role: "answer",
        at: "2026-11-29T09:00:00.000Z",
        rank: -1,
        snippet: [
          { text: "the ", hit: false },
          { text: "flaky", hit: true },
          { text: "\ntest", hit: false },
        ],
      },
      false,
      Date.parse("2026-11-29T10:00:00.000Z"),
    );
    expect(head).toBe("s1#4  claude · answer · 1h ago · greeter · /w");
    expect(snippet).toBe("  the flaky test");
  });
});

describe("following a file", () => {
  test("a pass that finds nothing new writes nothing; a new line is indexed and its progress kept", async () => {
    const file = join(tempDir("ag-search-follow-"), "conversation.jsonl");
    const lines = readFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    writeFileSync(file, `${lines.slice(0, -1).join("\n")}\n`);
    const s = createSearchStore(openDatabase(":memory:", SEARCH_MIGRATIONS));
    s.upsertSource({
      id: "s",
      origin: "session",
      agent: "claude",
      host: "here",
      workDir: "/w",
      tenantId: null,
      status: "idle",
      conversationId: null,
      title: null,
      path: file,
    });
    let saved = 0;
    const counted: SearchStore = {
      ...s,
      saveProgress(...args) {
        saved++;
        s.saveProgress(...args);
      },
    };
    const indexer = createSourceIndexer(counted, "s", { path: file, format: claudeTranscriptFormat });
    expect(await indexer.catchUp()).toBeGreaterThan(0);
    expect(saved).toBe(1);
    expect(await indexer.catchUp()).toBe(0);
    expect(saved).toBe(1);
    appendFileSync(file, `${lines.at(-1)}\n`);
    await indexer.catchUp();
    expect(saved).toBe(2);
    expect(s.source("s")!.fileSize).toBe(statSync(file).size);
  });
});
