/**
 * Append-only: a migration that has shipped is never edited or removed, because databases in
 * the field have already applied it. Change the schema by adding a migration at the end.
 */
export interface Migration {
  name: string;
  sql: string;
}

/** Shipped in two migration lists (state.db and memoryBridge.persistPath): never edit. */
const MEMORY_TABLE = `
  CREATE TABLE memory (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    expires_at  INTEGER
  );
  CREATE INDEX memory_expires ON memory(expires_at) WHERE expires_at IS NOT NULL;
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    name: "sessions",
    sql: `
      CREATE TABLE sessions (
        id                  TEXT PRIMARY KEY,
        name                TEXT NOT NULL,
        work_dir            TEXT NOT NULL,
        status              TEXT NOT NULL,
        created_at          TEXT NOT NULL,
        updated_at          TEXT NOT NULL,
        last_activity_at    TEXT NOT NULL,
        agent_command       TEXT,
        permission_mode     TEXT NOT NULL,
        stall_threshold_ms  INTEGER NOT NULL,
        parent_id           TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        tenant_id           TEXT,
        token_input         INTEGER NOT NULL DEFAULT 0,
        token_output        INTEGER NOT NULL DEFAULT 0,
        token_cache_read    INTEGER NOT NULL DEFAULT 0,
        token_cache_creation INTEGER NOT NULL DEFAULT 0,
        pending_permission  TEXT,
        window_id           TEXT,
        pane_id             TEXT,
        hook_secret         TEXT NOT NULL,
        transcript_path     TEXT,
        ended_at            TEXT,
        end_reason          TEXT
      );
      CREATE INDEX sessions_status ON sessions(status);
      CREATE INDEX sessions_work_dir ON sessions(work_dir);
      CREATE UNIQUE INDEX sessions_window ON sessions(window_id) WHERE window_id IS NOT NULL;
    `,
  },
  {
    name: "session permission policies",
    sql: `
      ALTER TABLE sessions ADD COLUMN permission_profile TEXT;
      ALTER TABLE sessions ADD COLUMN allow_read INTEGER;
      ALTER TABLE sessions ADD COLUMN allow_write INTEGER;
      ALTER TABLE sessions ADD COLUMN allow_bash INTEGER;
    `,
  },
  {
    // tmux reuses window and pane ids after its server restarts, and a spawned teammate shares
    // its parent's window: neither id identifies a session. Looked up by pane, not unique.
    name: "window ids are not unique",
    sql: `
      DROP INDEX sessions_window;
      CREATE INDEX sessions_pane ON sessions(pane_id);
    `,
  },
  {
    name: "memory, templates, audit, session environment",
    sql: `
      ${MEMORY_TABLE}
      CREATE TABLE templates (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        fields      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE audit (
        id          INTEGER PRIMARY KEY,
        timestamp   TEXT NOT NULL,
        actor       TEXT NOT NULL,
        tenant_id   TEXT,
        action      TEXT NOT NULL,
        target      TEXT,
        outcome     TEXT NOT NULL,
        ip          TEXT,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL
      );
      CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
      CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
      ALTER TABLE sessions ADD COLUMN env TEXT;
    `,
  },
  {
    // Every delivery to a channel target waits in the outbox until it succeeds or is given up;
    // given-up ones become dead letters. Both survive a crash of ag.
    name: "channel outbox and dead letters",
    sql: `
      CREATE TABLE outbox (
        id          INTEGER PRIMARY KEY,
        channel     TEXT NOT NULL,
        target      TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        event       TEXT NOT NULL,
        attempts    INTEGER NOT NULL DEFAULT 0,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX outbox_target ON outbox(channel, target, id);
      CREATE TABLE dead_letters (
        id          INTEGER PRIMARY KEY,
        channel     TEXT NOT NULL,
        target      TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        event       TEXT NOT NULL,
        attempts    INTEGER NOT NULL,
        last_error  TEXT NOT NULL,
        failed_at   TEXT NOT NULL
      );
      CREATE INDEX dead_letters_channel ON dead_letters(channel, id);
    `,
  },
  {
    // Which forum topic of the chat group holds which session: a restart posts into the same one.
    name: "chat topics",
    sql: `
      CREATE TABLE chat_topics (
        group_id    TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        thread_id   INTEGER NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (group_id, session_id)
      );
      CREATE INDEX chat_topics_thread ON chat_topics(group_id, thread_id);
    `,
  },
  {
    name: "pipelines",
    sql: `
      CREATE TABLE pipelines (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        work_dir    TEXT NOT NULL,
        status      TEXT NOT NULL,
        stages      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE INDEX pipelines_status ON pipelines(status);
    `,
  },
  {
    // API keys: the secret only as its SHA-256 (see src/auth/keys.ts); the prefix to recognise one.
    name: "api keys",
    sql: `
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        prefix       TEXT NOT NULL,
        hash         TEXT NOT NULL UNIQUE,
        scopes       TEXT NOT NULL,
        tenant_id    TEXT,
        created_at   TEXT NOT NULL,
        expires_at   TEXT,
        last_used_at TEXT
      );
    `,
  },
  {
    // The commit a session started from (what its work is diffed against), and who runs it.
    name: "session base commit and manager",
    sql: `
      ALTER TABLE sessions ADD COLUMN base_commit TEXT;
      ALTER TABLE sessions ADD COLUMN managed_by TEXT;
    `,
  },
  {
    // A review's record is kept whole as JSON: fields added later need no migration of old runs.
    name: "consensus reviews",
    sql: `
      CREATE TABLE consensus (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL,
        status      TEXT NOT NULL,
        record      TEXT NOT NULL,
        brief       TEXT,
        created_at  TEXT NOT NULL
      );
      CREATE INDEX consensus_session ON consensus(session_id, created_at);
      CREATE INDEX consensus_status ON consensus(status);
    `,
  },
  {
    // Which agent CLI a session runs, and how ag drives it; sessions before this ran Claude Code in tmux.
    name: "session agent and driver",
    sql: `
      ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude';
      ALTER TABLE sessions ADD COLUMN driver TEXT NOT NULL DEFAULT 'tmux';
    `,
  },
  {
    // Whether a headless session's agent is offered ag's own MCP server (a key of its own).
    name: "session offers ag's MCP server",
    sql: `
      ALTER TABLE sessions ADD COLUMN offer_mcp INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // The agent CLI's version a session's launch ran, and whether its adapter was verified on it
    // then (null: unknown). Sessions before this have neither.
    name: "session agent version",
    sql: `
      ALTER TABLE sessions ADD COLUMN agent_version TEXT;
      ALTER TABLE sessions ADD COLUMN agent_verified INTEGER;
    `,
  },
  {
    // The session a session's own key (offerMcp) is bound to: it reaches only that session and
    // those it created. Keys made before this were named after their session: bound by the name.
    name: "session keys bound to their session",
    sql: `
      ALTER TABLE api_keys ADD COLUMN session_id TEXT;
      UPDATE api_keys SET session_id = substr(name, 9, length(name) - 17)
        WHERE name LIKE 'session % (ag mcp)';
    `,
  },
  {
    // The model a session was created with (null: the agent's default); sessions before had none.
    name: "session model",
    sql: `
      ALTER TABLE sessions ADD COLUMN model TEXT;
    `,
  },
  {
    // Hibernation (docs/hibernation.md): when a session's agent was ended while the session stays
    // idle (null: it runs), and its own setting (null: the server's; 0: never hibernated).
    name: "session hibernation",
    sql: `
      ALTER TABLE sessions ADD COLUMN hibernated_at TEXT;
      ALTER TABLE sessions ADD COLUMN hibernate_after_ms INTEGER;
    `,
  },
  {
    // A checkpoint of a session's folder at each turn (src/checkpoints): the commits before
    // and after it, what it changed; and the present a code rewind replaced (its undo).
    name: "session checkpoints",
    sql: `
      CREATE TABLE checkpoints (
        session_id    TEXT NOT NULL,
        turn          INTEGER NOT NULL,
        folder        TEXT NOT NULL,
        prompt        TEXT,
        started_at    TEXT NOT NULL,
        ended_at      TEXT,
        before_commit TEXT NOT NULL,
        after_commit  TEXT,
        files         TEXT NOT NULL DEFAULT '[]',
        added         INTEGER NOT NULL DEFAULT 0,
        removed       INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, turn)
      );
      CREATE TABLE checkpoint_undo (
        session_id  TEXT PRIMARY KEY,
        folder      TEXT NOT NULL,
        commit_id   TEXT NOT NULL,
        turn        INTEGER NOT NULL,
        created_at  TEXT NOT NULL
      );
    `,
  },
  {
    // Budgets (src/budgets): each session's cap, what ag last counted it spent, its state and the
    // prompt held while it is paused; every increase of spend as a row (day and month totals);
    // the sessions a handoff links, and a session's own handoff policy (its template's).
    name: "budgets and handoff",
    sql: `
      CREATE TABLE session_budgets (
        session_id   TEXT PRIMARY KEY,
        tenant_id    TEXT,
        usd          REAL,
        tokens       INTEGER,
        spent_usd    REAL NOT NULL DEFAULT 0,
        spent_tokens INTEGER NOT NULL DEFAULT 0,
        unpriced     TEXT NOT NULL DEFAULT '[]',
        state        TEXT NOT NULL DEFAULT 'ok',
        reached_by   TEXT,
        held_prompt  TEXT,
        interrupt    INTEGER,
        updated_at   TEXT NOT NULL
      );
      CREATE TABLE budget_spend (
        id           INTEGER PRIMARY KEY,
        session_id   TEXT NOT NULL,
        tenant_id    TEXT,
        at           TEXT NOT NULL,
        usd          REAL NOT NULL,
        tokens       INTEGER NOT NULL
      );
      CREATE INDEX budget_spend_at ON budget_spend(at);
      CREATE INDEX budget_spend_session ON budget_spend(session_id, at);
      CREATE TABLE budget_overrides (
        scope        TEXT PRIMARY KEY,
        usd          REAL,
        updated_at   TEXT NOT NULL
      );
      CREATE TABLE session_handoffs (
        from_id      TEXT NOT NULL,
        to_id        TEXT NOT NULL PRIMARY KEY,
        trigger      TEXT NOT NULL,
        brief        TEXT NOT NULL,
        created_at   TEXT NOT NULL
      );
      CREATE INDEX session_handoffs_from ON session_handoffs(from_id);
      CREATE TABLE handoff_policies (
        session_id   TEXT PRIMARY KEY,
        policy       TEXT NOT NULL
      );
    `,
  },
];

/** The memory bridge's own file (memoryBridge.persistPath): the same table, versioned on its own. */
export const MEMORY_MIGRATIONS: readonly Migration[] = [
  {
    name: "memory",
    sql: `
      ${MEMORY_TABLE}
    `,
  },
];

/**
 * The search index's own file (<stateDir>/search.db, src/search/): derived from the transcripts,
 * rebuilt from them on demand. `search_text` is an FTS5 index over `search_turns.text` (external
 * content: the text is stored once), kept in step by the triggers.
 */
export const SEARCH_MIGRATIONS: readonly Migration[] = [
  {
    name: "search index",
    sql: `
      CREATE TABLE search_sources (
        id               TEXT PRIMARY KEY,
        origin           TEXT NOT NULL,
        agent            TEXT NOT NULL,
        host             TEXT NOT NULL,
        work_dir         TEXT,
        tenant_id        TEXT,
        status           TEXT,
        conversation_id  TEXT,
        title            TEXT,
        path             TEXT NOT NULL,
        indexed_id       INTEGER NOT NULL DEFAULT 0,
        file_size        INTEGER NOT NULL DEFAULT 0,
        file_mtime_ms    INTEGER NOT NULL DEFAULT 0,
        updated_at       TEXT NOT NULL
      );
      CREATE INDEX search_sources_origin ON search_sources(origin);
      CREATE TABLE search_turns (
        id          INTEGER PRIMARY KEY,
        source_id   TEXT NOT NULL REFERENCES search_sources(id) ON DELETE CASCADE,
        message_id  INTEGER NOT NULL,
        role        TEXT NOT NULL,
        at          TEXT,
        text        TEXT NOT NULL
      );
      CREATE UNIQUE INDEX search_turns_message ON search_turns(source_id, message_id);
      CREATE VIRTUAL TABLE search_text USING fts5(
        text, content='search_turns', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER search_turns_ai AFTER INSERT ON search_turns BEGIN
        INSERT INTO search_text(rowid, text) VALUES (new.id, new.text);
      END;
      CREATE TRIGGER search_turns_ad AFTER DELETE ON search_turns BEGIN
        INSERT INTO search_text(search_text, rowid, text) VALUES ('delete', old.id, old.text);
      END;
    `,
  },
];
