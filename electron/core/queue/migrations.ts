import type { Migration } from '../db/open.ts';

/**
 * The queue's schema in mediadesk.db. Numbered and immutable once shipped: change the schema by
 * appending a migration, never by editing one (every user's file must converge).
 */
export const QUEUE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'batches, jobs, queue lease and flags',
    up: (db) => {
      db.exec(`
        CREATE TABLE batches (
          id          TEXT PRIMARY KEY,
          tool        TEXT NOT NULL,
          out_dir     TEXT NOT NULL,
          params      TEXT NOT NULL,           -- JSON: the user's parameters, without inputs
          roots       TEXT NOT NULL,           -- JSON: the files or folders the user chose
          created_at  INTEGER NOT NULL
        );
        CREATE TABLE jobs (
          id            TEXT PRIMARY KEY,
          seq           INTEGER NOT NULL,       -- submission order across batches
          batch_id      TEXT NOT NULL REFERENCES batches(id),
          tool          TEXT NOT NULL,
          state         TEXT NOT NULL,
          input_path    TEXT,                   -- absolute local file, null for prompt-only jobs
          rel_dir       TEXT NOT NULL DEFAULT '',
          out_dir       TEXT NOT NULL,
          params        TEXT NOT NULL,           -- JSON
          snapshot      TEXT NOT NULL,           -- JSON: settings in force when the job was queued
          attempt_id    TEXT,                   -- persisted before each create is sent
          attempts      INTEGER NOT NULL DEFAULT 0,
          task_id       TEXT,
          generated     TEXT,                   -- JSON array of result items from the API
          expires_at    INTEGER,                -- when result URLs stop working (ms)
          planned       TEXT,                   -- JSON: output paths reserved for each result
          outputs       TEXT NOT NULL DEFAULT '[]', -- JSON: files finished and renamed
          error         TEXT,
          invalid       TEXT,                   -- JSON InvalidParam[]
          next_poll_at  INTEGER,
          submitted_at  INTEGER,
          created_at    INTEGER NOT NULL,
          updated_at    INTEGER NOT NULL
        );
        CREATE INDEX jobs_state ON jobs(state, seq);
        CREATE INDEX jobs_batch ON jobs(batch_id, state);
        CREATE INDEX jobs_input ON jobs(tool, input_path, out_dir);
        CREATE INDEX jobs_updated ON jobs(updated_at);
        CREATE TABLE queue_lease (
          id         INTEGER PRIMARY KEY CHECK (id = 1),
          owner      TEXT NOT NULL,
          pid        INTEGER NOT NULL,
          host       TEXT NOT NULL,
          heartbeat  INTEGER NOT NULL
        );
        CREATE TABLE queue_flags (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        );
      `);
    },
  },
  {
    version: 2,
    name: 'workflow app runs, credit-usage ledger and cache',
    up: (db) => {
      // App runs live beside tool jobs under the same queue lease and crash rules (electron/core/apps).
      db.exec(`
        CREATE TABLE app_runs (
          id            TEXT PRIMARY KEY,
          seq           INTEGER NOT NULL,
          app_id        TEXT NOT NULL,
          app_name      TEXT NOT NULL,
          output_kind   TEXT NOT NULL,           -- image, video or audio (how results are named)
          cost          REAL,                    -- tool_metadata.total_cost the user confirmed
          state         TEXT NOT NULL,           -- the job states of queue/states.ts
          inputs        TEXT NOT NULL,           -- JSON: value per input id, as sent
          out_dir       TEXT NOT NULL,
          attempt_id    TEXT,                    -- persisted before the run POST is sent
          attempts      INTEGER NOT NULL DEFAULT 0,
          run_id        TEXT,                    -- workflow_run_identifier
          run_status    TEXT,                    -- the server's lowercase status
          results       TEXT,                    -- JSON: result URLs
          expires_at    INTEGER,
          outputs       TEXT NOT NULL DEFAULT '[]',
          error         TEXT,
          invalid       TEXT,
          next_poll_at  INTEGER,
          submitted_at  INTEGER,
          created_at    INTEGER NOT NULL,
          updated_at    INTEGER NOT NULL
        );
        CREATE INDEX app_runs_state ON app_runs(state, seq);
        CREATE INDEX app_runs_updated ON app_runs(updated_at);
        CREATE TABLE usage_ledger (
          key_hash  TEXT NOT NULL,               -- SHA-256 prefix of the API key, never the key
          day       TEXT NOT NULL,               -- UTC day: the service's quota resets at midnight UTC
          count     INTEGER NOT NULL,
          PRIMARY KEY (key_hash, day)
        );
        CREATE TABLE usage_cache (
          key_hash    TEXT NOT NULL,
          body_hash   TEXT NOT NULL,             -- SHA-256 of the normalized request body
          body        TEXT NOT NULL,
          response    TEXT NOT NULL,
          fetched_at  INTEGER NOT NULL,
          PRIMARY KEY (key_hash, body_hash)
        );
      `);
    },
  },
  {
    version: 3,
    name: 'app runs record their backend',
    up: (db) => {
      // `sandbox` or `live <base URL>` (Backend.identity) when the run was queued; NULL for runs
      // queued before this version. A run is resumed and driven only on its own backend.
      db.exec('ALTER TABLE app_runs ADD COLUMN backend TEXT');
    },
  },
  {
    version: 4,
    name: 'batches record their backend',
    up: (db) => {
      // `sandbox` or `live <base URL>` (Backend.identity) when the batch was started; NULL for
      // batches from before this version. A batch's jobs are submitted and polled only there: a
      // task id means nothing on another server, and a demo batch must not be paid for on live.
      db.exec('ALTER TABLE batches ADD COLUMN backend TEXT');
    },
  },
  {
    version: 5,
    name: 'jobs record the input bytes they sent',
    up: (db) => {
      // Size and SHA-256 of the input as last sent (NULL before this version, or for prompt-only
      // jobs): the same photo met again under another path (the web host copies each drop anew)
      // is known by reading that copy once, not the earlier copy too, even when the earlier one is gone.
      db.exec('ALTER TABLE jobs ADD COLUMN input_size INTEGER; ALTER TABLE jobs ADD COLUMN input_sha256 TEXT;');
    },
  },
  {
    version: 6,
    name: 'jobs on the built-in Sandbox record whose Sandbox has their task',
    up: (db) => {
      // The queue owner (Engine, as in queue_lease.owner) that sent the job to its own built-in
      // Sandbox; NULL on the live service and before this version. That Sandbox ends with its
      // process: once that owner no longer holds the queue, the task is gone (JobStore.requeueGoneSandbox).
      db.exec('ALTER TABLE jobs ADD COLUMN sandbox_of TEXT');
    },
  },
  {
    version: 7,
    name: 'app runs on the built-in Sandbox record whose Sandbox has them',
    up: (db) => {
      // As jobs.sandbox_of (migration 6), for workflow-app runs: AppRunStore.requeueGoneSandbox.
      db.exec('ALTER TABLE app_runs ADD COLUMN sandbox_of TEXT');
    },
  },
  {
    version: 8,
    name: 'the pacing limiter: grants, daily uses and the user caps',
    up: (db) => {
      // Shared by every process on the data folder (core/limits). `scope` names whose limits:
      // the backend and a hash of the key, never the key. IF NOT EXISTS: a file whose version
      // was set back by hand (test/engine/sandbox-gone.test.ts) still has these tables.
      db.exec(`
        CREATE TABLE IF NOT EXISTS limiter_grants (
          scope       TEXT NOT NULL,
          granted_at  INTEGER NOT NULL             -- ms since the epoch
        );
        CREATE INDEX IF NOT EXISTS limiter_grants_by_scope ON limiter_grants (scope, granted_at);
        CREATE TABLE IF NOT EXISTS limiter_daily_uses (
          scope  TEXT NOT NULL,
          tool   TEXT NOT NULL,                    -- catalogue tool id
          day    TEXT NOT NULL,                    -- UTC day, YYYY-MM-DD
          uses   INTEGER NOT NULL,
          PRIMARY KEY (scope, tool, day)
        );
        CREATE TABLE IF NOT EXISTS limiter_caps (
          plan  TEXT NOT NULL,                     -- plan tier: business, enterprise
          tool  TEXT NOT NULL,                     -- catalogue tool id, or * for every tool not named
          cap   INTEGER NOT NULL CHECK (cap >= 0), -- creates per UTC day; overrides the default
          PRIMARY KEY (plan, tool)
        );
      `);
    },
  },
  {
    version: 9,
    name: 'a batch estimate, its budget and why it is held',
    up: (db) => {
      // The estimate told before Start (core/limits/estimate.ts): credits, or NULL when the cost
      // could not be known, with its basis in words. The budget is the user's optional cap in
      // credits or jobs; held_by says why the batch's queued jobs wait (its budget), NULL when not.
      // Column by column, as migration 8: a file whose version was set back by hand has them.
      const has = new Set((db.prepare('PRAGMA table_info(batches)').all() as { name: string }[]).map((c) => c.name));
      for (const [name, type] of [
        ['estimate_credits', 'REAL'],
        ['estimate_basis', 'TEXT'],
        ['budget_credits', 'REAL'],
        ['budget_jobs', 'INTEGER'],
        ['held_by', 'TEXT'],
      ])
        if (!has.has(name)) db.exec(`ALTER TABLE batches ADD COLUMN ${name} ${type}`);
    },
  },
  {
    version: 10,
    name: 'uploaded inputs, reused by content until their asset URL nears its end',
    up: (db) => {
      // A local file sent to a URL-only field is uploaded once (request-url, PUT) and recorded here
      // before its create is sent, so a restart between the two neither uploads again nor loses it.
      // `scope` is the backend and base URL it went to; `expires_at` the asset URL's end, in ms.
      db.exec(`
        CREATE TABLE IF NOT EXISTS uploads (
          scope         TEXT NOT NULL,
          sha256        TEXT NOT NULL,
          content_type  TEXT NOT NULL,
          file_id       TEXT NOT NULL,
          asset_url     TEXT NOT NULL,
          expires_at    INTEGER NOT NULL,
          uploaded_at   INTEGER NOT NULL,
          PRIMARY KEY (scope, sha256, content_type)
        );
      `);
    },
  },
  {
    version: 11,
    name: "a retried job's earlier charges, daily caps learned from the service, the user's own prices",
    up: (db) => {
      // earlier_charges: the tasks a job had accepted (so charged) before a Retry sent it anew, as
      // JSON [{taskId, at}]; the report counts them. limiter_learned_caps: a daily cap the service
      // told by a 429, per scope and tool, until the reset it gave. prices_own: credits per use the
      // user set over the published price table (shared/prices.ts).
      const has = new Set((db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name));
      if (!has.has('earlier_charges')) db.exec('ALTER TABLE jobs ADD COLUMN earlier_charges TEXT');
      db.exec(`
        CREATE TABLE IF NOT EXISTS limiter_learned_caps (
          scope       TEXT NOT NULL,
          tool        TEXT NOT NULL,               -- catalogue tool id
          cap         INTEGER NOT NULL,            -- creates granted that day when the service refused
          learned_at  INTEGER NOT NULL,            -- ms since the epoch
          until       INTEGER NOT NULL,            -- the reset the service gave
          PRIMARY KEY (scope, tool)
        );
        CREATE TABLE IF NOT EXISTS prices_own (
          tool    TEXT PRIMARY KEY,                -- catalogue tool id
          credits REAL NOT NULL CHECK (credits >= 0),
          set_at  INTEGER NOT NULL
        );
      `);
    },
  },
  {
    version: 12,
    name: 'the files jobs and app runs wrote and were given, each found by an index',
    up: (db) => {
      // The web host's /media asks for each file whether the queue recorded it: a scan of every
      // job's outputs (instr over JSON) and of input_path, per request. result_paths holds each
      // output path once per row that wrote it, kept by triggers whoever writes outputs.
      const owned = (table: string, tag: string) => `
        CREATE TRIGGER ${table}_outputs_insert AFTER INSERT ON ${table} WHEN json_valid(NEW.outputs) BEGIN
          INSERT OR IGNORE INTO result_paths (path, owner)
            SELECT value, '${tag}' || NEW.id FROM json_each(NEW.outputs) WHERE type = 'text';
        END;
        CREATE TRIGGER ${table}_outputs_update AFTER UPDATE OF outputs ON ${table} BEGIN
          DELETE FROM result_paths WHERE owner = '${tag}' || OLD.id;
          INSERT OR IGNORE INTO result_paths (path, owner)
            SELECT value, '${tag}' || NEW.id FROM json_each(CASE WHEN json_valid(NEW.outputs) THEN NEW.outputs ELSE '[]' END)
            WHERE type = 'text';
        END;
        CREATE TRIGGER ${table}_outputs_delete AFTER DELETE ON ${table} BEGIN
          DELETE FROM result_paths WHERE owner = '${tag}' || OLD.id;
        END;
        INSERT OR IGNORE INTO result_paths (path, owner)
          SELECT j.value, '${tag}' || t.id FROM ${table} AS t, json_each(t.outputs) AS j
          WHERE json_valid(t.outputs) AND j.type = 'text';`;
      db.exec(`
        CREATE INDEX IF NOT EXISTS jobs_input_path ON jobs(input_path);
        CREATE TABLE result_paths (
          path   TEXT NOT NULL,                  -- a file a job or an app run wrote
          owner  TEXT NOT NULL,                  -- 'j:' job id or 'a:' app run id
          PRIMARY KEY (path, owner)
        ) WITHOUT ROWID;
        CREATE INDEX result_paths_owner ON result_paths(owner);
        ${owned('jobs', 'j:')}
        ${owned('app_runs', 'a:')}
      `);
    },
  },
  {
    version: 13,
    name: "a batch's project, whose team budget its creates count against",
    up: (db) => {
      db.exec('ALTER TABLE batches ADD COLUMN project TEXT');
    },
  },
  {
    version: 14,
    name: "how long each tool's tasks took lately, per backend",
    up: (db) => {
      // The poller's first ask of a task comes when its tool's tasks usually end (engine/usual-durations.ts).
      db.exec(`
        CREATE TABLE usual_durations (
          backend TEXT NOT NULL,                 -- keyless backend identity, '' when not told
          tool    TEXT NOT NULL,                 -- catalogue tool id
          samples TEXT NOT NULL,                 -- JSON array of ms, the newest last
          tasks   INTEGER NOT NULL,              -- tasks learned from, ever (one in eight is asked early)
          PRIMARY KEY (backend, tool)
        ) WITHOUT ROWID;
      `);
    },
  },
];
