import type { Sql } from "postgres";
import { failedPrecondition } from "../../core/errors.js";

/**
 * The versioned schema of the PostgreSQL engine. Migrations are applied in
 * order at start-up, each in its own transaction, under a transaction-level
 * advisory lock so that replicas starting together do not race. A database
 * whose schema is newer than the code knows is refused (an older sessiond
 * must not write into a layout it does not understand).
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "sessions and entries",
    sql: `
CREATE TABLE sessiond_sessions (
  workspace         text    NOT NULL,
  session_id        text    NOT NULL,
  -- changes when a session is deleted and created again under the same id:
  -- a replica's cached log of the old incarnation is then dropped
  incarnation       bigint  GENERATED ALWAYS AS IDENTITY,
  created_at_ms     bigint  NOT NULL,
  parent_session_id text    NOT NULL DEFAULT '',
  head_seq          integer NOT NULL,
  leaf_id           text    NOT NULL,
  message_count     integer NOT NULL,
  title             text,
  updated_at_ms     bigint  NOT NULL,
  PRIMARY KEY (workspace, session_id)
);
-- listing: newest first (keyset on created_at_ms, session_id), subagents by parent
CREATE INDEX sessiond_sessions_by_created
  ON sessiond_sessions (workspace, created_at_ms DESC, session_id DESC);
CREATE INDEX sessiond_sessions_by_parent
  ON sessiond_sessions (workspace, parent_session_id, created_at_ms DESC, session_id DESC)
  WHERE parent_session_id <> '';

CREATE TABLE sessiond_entries (
  workspace  text    NOT NULL,
  session_id text    NOT NULL,
  seq        integer NOT NULL CHECK (seq >= 1),
  id         text    NOT NULL,
  parent_id  text,
  kind       text,
  -- the entry's canonical proto JSON (toJsonString), exactly the JSONL payload;
  -- text, not jsonb: jsonb refuses \\u0000 and reorders keys
  payload    text    NOT NULL,
  PRIMARY KEY (workspace, session_id, seq),
  UNIQUE (workspace, session_id, id),
  FOREIGN KEY (workspace, session_id)
    REFERENCES sessiond_sessions (workspace, session_id) ON DELETE CASCADE
);
`,
  },
  {
    version: 2,
    description: "keyset listing index in bytewise id order",
    sql: `
-- Listing pages are chosen in SQL (listing.ts, pageRoots): filter on the
-- parent ('' = top level), order by created_at_ms then session_id, keyset
-- after the previous page's last key, LIMIT. This one index serves that
-- for top-level sessions and for a parent's subagents alike, both orders
-- (scanned backwards for oldest first), with no sort.
-- session_id is ordered COLLATE "C" (bytewise: the order of JavaScript's <
-- on ASCII ids, which the JSONL and memory engines' listings use) whatever
-- the database's collation; under en_US, say, '-' and '_' would be skipped
-- and case folded, and pages would come out in another order.
CREATE INDEX sessiond_sessions_page
  ON sessiond_sessions (workspace, parent_session_id, created_at_ms DESC,
    session_id COLLATE "C" DESC);
-- Superseded by sessiond_sessions_page (they order ids by the database's
-- collation, and no other query uses them): not kept up on every create.
DROP INDEX sessiond_sessions_by_created;
DROP INDEX sessiond_sessions_by_parent;
`,
  },
  {
    version: 3,
    description: "session references: prefixes of ids and of short ids",
    sql: `
-- A session is addressed by a prefix of its id or of its short id (the
-- random part of a generated id, YYYYMMDD-HHMMSS-<8 hex>); listing.ts,
-- idsByRef, looks each up as a range scan. Bytewise (COLLATE "C"), so that
-- a prefix is a range whatever the database's collation; the primary key
-- orders ids by that collation and cannot serve it.
CREATE INDEX sessiond_sessions_id_prefix
  ON sessiond_sessions (workspace, session_id COLLATE "C");
CREATE INDEX sessiond_sessions_short_id
  ON sessiond_sessions (workspace, (right(session_id, 8)) COLLATE "C")
  WHERE session_id ~ '^[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$';
`,
  },
  {
    version: 4,
    description: "SessionInfo entries of a session, for its tags",
    sql: `
-- A session's tags fold its SessionInfo entries in seq order (the root's,
-- then each later one's changes); listing records read them (rows.ts,
-- INFO_PAYLOADS). Few per session, found without scanning its messages.
CREATE INDEX sessiond_entries_session_info
  ON sessiond_entries (workspace, session_id, seq)
  WHERE kind = 'sessionInfo';
`,
  },
  {
    version: 5,
    description: "trigram index of message entries, for SearchEntries",
    sql: `
-- SearchEntries (search.ts) asks for the message entries whose payload holds
-- every needle of the query, ASCII case ignored (payload ILIKE '%needle%'):
-- substrings, as the store's own word match is, which a trigram index serves
-- and a full-text one (words, stems) does not. pg_trgm is a trusted
-- extension (PostgreSQL >= 13: the database owner may create it); a role that
-- may not create it still gets a working search, without the index, by a
-- scan of the workspace's messages, and a NOTICE saying so.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file THEN
  RAISE NOTICE 'sessiond: pg_trgm is not available (%); SearchEntries scans without an index', SQLERRM;
END $$;
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS sessiond_entries_text ON sessiond_entries
      USING gin (payload gin_trgm_ops) WHERE kind = ''message''';
  END IF;
END $$;
`,
  },
  {
    version: 6,
    description: "leases of background jobs",
    sql: `
-- A background job that one replica at a time runs (the retention sweep)
-- is leased here (exclusive-job.ts): a replica takes the row when it is
-- free or expired, and deletes it when done; one that dies leaves it to
-- expire.
CREATE TABLE sessiond_job_leases (
  name       text        PRIMARY KEY,
  holder     text        NOT NULL,
  expires_at timestamptz NOT NULL
);
`,
  },
  {
    version: 7,
    description: "folded tags of a session, for tag filters",
    sql: `
-- A session's tags folded (the root's, then each later SessionInfo's
-- changes: core/tags.ts), written with the rest of the session row by
-- every create and append, like the title. A listing filtered by tags asks
-- for the sessions whose tags hold the filter's (tags @> filter) and reads
-- only their roots and records (listing.ts; indexed by migration 8).
-- tags_head is the head_seq the tags were folded at: a session not written
-- since this migration (NULL), or last written by a sessiond older than it
-- (a rolling upgrade: head_seq moved, tags_head did not), is always read, so
-- stale tags never hide a session.
ALTER TABLE sessiond_sessions ADD COLUMN tags jsonb, ADD COLUMN tags_head integer;
`,
  },
  {
    version: 8,
    description: "index of folded tags",
    sql: `
-- The sessions whose folded tags hold a filter's, found by this index
-- (tags @> filter) instead of by testing every session row of the
-- workspace: a tag-filtered listing asks for them and, separately, for the
-- rows whose tags are not folded at their head (a cheap test of two
-- integers over the rows: listing.ts). Only the tags are indexed, and an
-- append writes them unchanged unless it changes them, so appends stay HOT
-- updates (tags-column.test.ts; an index on head_seq or tags_head would end
-- that). Built inside
-- the migration's transaction, blocking writes to sessiond_sessions
-- meanwhile: create it CONCURRENTLY by hand first on a big table, with the
-- same name and definition.
CREATE INDEX IF NOT EXISTS sessiond_sessions_tags ON sessiond_sessions USING gin (tags jsonb_path_ops);
`,
  },
  {
    version: 9,
    description: "blobs and blob uploads, in chunks",
    sql: `
-- Large content parts stored once per workspace, content-addressed by
-- SHA-256 (blobs.ts). A row is a stored blob (upload false) or an
-- unfinished upload of the same hash (upload true); both may exist at
-- once. touched_at is the last store, upload or use: the garbage
-- collector removes only rows untouched since a given time.
CREATE TABLE IF NOT EXISTS sessiond_blobs (
  workspace  text        NOT NULL,
  sha256     text        NOT NULL,
  upload     boolean     NOT NULL,
  -- the blob's size, or the bytes an upload holds so far
  size       bigint      NOT NULL CHECK (size >= 0),
  touched_at timestamptz NOT NULL,
  PRIMARY KEY (workspace, sha256, upload)
);
-- The bytes, in rows of at most 1 MiB keyed by the position where each
-- starts: a range read fetches only the rows it overlaps, and no blob is
-- one bytea value. A blob's row and its chunks are written in one
-- transaction; a committed upload becomes the blob by an UPDATE of its
-- row's upload, which the chunks follow (ON UPDATE CASCADE, their data
-- not rewritten); deleting a row deletes its chunks in the same statement.
CREATE TABLE IF NOT EXISTS sessiond_blob_chunks (
  workspace text    NOT NULL,
  sha256    text    NOT NULL,
  upload    boolean NOT NULL,
  pos       bigint  NOT NULL CHECK (pos >= 0),
  data      bytea   NOT NULL,
  PRIMARY KEY (workspace, sha256, upload, pos),
  FOREIGN KEY (workspace, sha256, upload)
    REFERENCES sessiond_blobs (workspace, sha256, upload)
    ON DELETE CASCADE ON UPDATE CASCADE
);
`,
  },
  {
    version: 10,
    description: "erasure audit records",
    sql: `
-- One row per erasure call (SessionStore.erase, erase.ts): who, when, what
-- was asked, which sessions and how many entries, as the JSON text the store
-- made (no content of any session). Append-only: nothing of sessiond updates
-- or deletes these rows, and no foreign key ties them to sessions, so they
-- outlive the sessions they name (deleting a session keeps its erasures).
CREATE TABLE IF NOT EXISTS sessiond_erasures (
  workspace   text        NOT NULL,
  n           bigint      GENERATED ALWAYS AS IDENTITY,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  record      text        NOT NULL,
  PRIMARY KEY (workspace, n)
);
`,
  },
  {
    version: 11,
    description: "share links",
    sql: `
-- Share links (StoreService.ShareSession; storage/postgres/shares.ts): one
-- row per share, keyed by the SHA-256 of its token (the token itself is
-- never stored, so a dump holds no live link). No foreign key to the
-- session: deleting or erasing a session marks its shares revoked.
CREATE TABLE IF NOT EXISTS sessiond_shares (
  digest           text    PRIMARY KEY,
  id               text    NOT NULL,
  workspace        text    NOT NULL,
  session_id       text    NOT NULL,
  root_id          text    NOT NULL,
  entry_id         text    NOT NULL,
  created_at_ms    bigint  NOT NULL,
  expires_at_ms    bigint  NOT NULL,
  by_name          text    NOT NULL,
  omit_tool_output boolean NOT NULL,
  omit_thinking    boolean NOT NULL,
  revoked_at_ms    bigint  NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessiond_shares_by_session
  ON sessiond_shares (workspace, session_id);
`,
  },
  {
    version: 12,
    description: "wrapped data keys of sealed sessions",
    sql: `
-- Encryption at rest (sealing.ts): a sealed session's random data key,
-- wrapped by its workspace's key through the key provider (key_id, the
-- version, the provider's wrapped form). A session without a row is in
-- clear. Erasure destroys the key: wrapped, key_id and key_version become
-- NULL and erased says when, by whom and why (no key material), so the
-- session's sealed payloads never open again. A row of its own (not columns
-- of sessiond_sessions, which every append rewrites): the wrapped key is in
-- one row version, which the VACUUM after an erasure removes.
CREATE TABLE IF NOT EXISTS sessiond_session_keys (
  workspace   text    NOT NULL,
  session_id  text    NOT NULL,
  key_id      text,
  key_version integer,
  wrapped     text,
  erased      text,
  PRIMARY KEY (workspace, session_id),
  FOREIGN KEY (workspace, session_id)
    REFERENCES sessiond_sessions (workspace, session_id) ON DELETE CASCADE,
  CHECK ((wrapped IS NULL) = (erased IS NOT NULL))
);
`,
  },
  {
    version: 13,
    description: "usage sums per (session, hour, model) in numeric columns",
    sql: `
-- UsageReport's sums (usage-report.ts): one row per (session, UTC hour,
-- model) with its token sums in numeric columns, so that a report asks
-- PostgreSQL for SUM(...) GROUP BY (bucket, model, tag values) instead of
-- reading every row. The tables were created at a session's first report
-- by sessiond before this migration, with the sums in a JSON text column:
-- they are dropped (they are a cache of the entries; the next report counts
-- every session again) and made here.
DROP TABLE IF EXISTS sessiond_usage;
DROP TABLE IF EXISTS sessiond_usage_heads;
CREATE TABLE sessiond_usage_heads (
  workspace   text    NOT NULL,
  session_id  text    NOT NULL,
  -- the incarnation of sessiond_sessions the sums are of
  incarnation bigint  NOT NULL,
  -- entries with seq <= head are in sessiond_usage
  head        integer NOT NULL,
  PRIMARY KEY (workspace, session_id)
);
CREATE TABLE sessiond_usage (
  workspace     text    NOT NULL,
  session_id    text    NOT NULL,
  -- start of the UTC hour, ms
  hour_ms       bigint  NOT NULL,
  model         text    NOT NULL,
  messages      bigint  NOT NULL,
  input         numeric NOT NULL,
  output        numeric NOT NULL,
  cache_read    numeric NOT NULL,
  cache_write   numeric NOT NULL,
  reasoning     numeric NOT NULL,
  -- the messages without a caller-set cost: priced when a report reads them
  u_messages    bigint  NOT NULL,
  u_input       numeric NOT NULL,
  u_output      numeric NOT NULL,
  u_cache_read  numeric NOT NULL,
  u_cache_write numeric NOT NULL,
  -- caller-set costs: JSON {currency: units of 10^-12 as a decimal string}
  caller_cost   text    NOT NULL,
  first_seq     integer NOT NULL,
  last_seq      integer NOT NULL,
  PRIMARY KEY (workspace, session_id, hour_ms, model)
);
CREATE INDEX sessiond_usage_by_hour ON sessiond_usage (workspace, hour_ms);
`,
  },
  {
    version: 14,
    description: "sealed blobs: workspace blob data keys",
    sql: `
-- Sealed blobs (blobs.ts, seal/blob-seal.ts): in a sealed workspace a
-- blob's chunks hold its sealed form (64 KiB segments, AES-256-GCM under
-- the workspace's blob data key); size stays the plaintext size and sha256
-- the plaintext's hash. sealed says which form the chunks hold: blobs
-- stored in clear before stay readable. The blob data key is random,
-- wrapped by the workspace's key through the key provider, one row per
-- workspace.
ALTER TABLE sessiond_blobs ADD COLUMN IF NOT EXISTS sealed boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS sessiond_blob_keys (
  workspace   text    PRIMARY KEY,
  key_id      text    NOT NULL,
  key_version integer NOT NULL,
  wrapped     text    NOT NULL
);
`,
  },
  {
    version: 15,
    description: "usage roll-up per (workspace, hour, model, tags)",
    sql: `
-- UsageReport's warm report reads a roll-up of the usage rows instead of
-- every (session, hour, model) row (usage-report.ts): sessiond_usage_rollup
-- holds, per (workspace, UTC hour, model, the session's folded tags), the
-- sums of the rows of migration 13, kept up in the same transaction that
-- counts a session's new entries, deletes a session or re-prices the
-- workspace. A report over whole hours groups a few rows per (hour, model,
-- tag set) instead of one per session.
--
-- Costs are priced when a row is counted, with the price table of the
-- server counting (each row rounded on its own, as before), and the table
-- the workspace's rows are priced with is named in sessiond_usage_prices
-- (a digest): a report made with another table prices the workspace's rows
-- again and rebuilds its roll-up first.
--
-- Distinct sessions are not additive across hours or models: each usage
-- row carries the previous hour of its session with the same model
-- (prev_model_ms) and with any model (prev_any_ms), and whether its model
-- is the session's first of that hour (first_model); a group counts the
-- rows whose previous hour is before the group's start (or the window's),
-- once per session. These are in the roll-up's key.
--
-- The tables are a cache of the entries: dropped and made again, the next
-- report counts every session again.
DROP TABLE IF EXISTS sessiond_usage;
DROP TABLE IF EXISTS sessiond_usage_heads;
CREATE TABLE sessiond_usage_heads (
  workspace   text    NOT NULL,
  session_id  text    NOT NULL,
  incarnation bigint  NOT NULL,
  head        integer NOT NULL,
  -- the session's folded tags when counted: its rows' key in the roll-up
  tags        jsonb   NOT NULL,
  PRIMARY KEY (workspace, session_id)
);
CREATE TABLE sessiond_usage (
  workspace     text    NOT NULL,
  session_id    text    NOT NULL,
  hour_ms       bigint  NOT NULL,
  model         text    NOT NULL,
  messages      bigint  NOT NULL,
  input         numeric NOT NULL,
  output        numeric NOT NULL,
  cache_read    numeric NOT NULL,
  cache_write   numeric NOT NULL,
  reasoning     numeric NOT NULL,
  u_messages    bigint  NOT NULL,
  u_input       numeric NOT NULL,
  u_output      numeric NOT NULL,
  u_cache_read  numeric NOT NULL,
  u_cache_write numeric NOT NULL,
  caller_cost   text    NOT NULL,
  first_seq     integer NOT NULL,
  last_seq      integer NOT NULL,
  -- the uncosted tokens priced (NULL: no price row, or nothing uncosted)
  p_currency    text,
  p_units       numeric,
  prev_model_ms bigint  NOT NULL,
  prev_any_ms   bigint  NOT NULL,
  first_model   boolean NOT NULL,
  PRIMARY KEY (workspace, session_id, hour_ms, model)
);
CREATE INDEX sessiond_usage_by_hour ON sessiond_usage (workspace, hour_ms);
-- currency '' holds the token sums, n the rows and unpriced the messages
-- without a cost; a currency's row holds its cost units and n the rows
-- that have some (a cost of 0 still shows).
CREATE TABLE sessiond_usage_rollup (
  workspace     text    NOT NULL,
  hour_ms       bigint  NOT NULL,
  model         text    NOT NULL,
  tags          jsonb   NOT NULL,
  prev_model_ms bigint  NOT NULL,
  prev_any_ms   bigint  NOT NULL,
  first_model   boolean NOT NULL,
  currency      text    NOT NULL,
  n             bigint  NOT NULL,
  messages      bigint  NOT NULL,
  input         numeric NOT NULL,
  output        numeric NOT NULL,
  cache_read    numeric NOT NULL,
  cache_write   numeric NOT NULL,
  reasoning     numeric NOT NULL,
  unpriced      bigint  NOT NULL,
  units         numeric NOT NULL,
  PRIMARY KEY (workspace, hour_ms, model, tags, prev_model_ms, prev_any_ms, first_model, currency)
);
CREATE TABLE sessiond_usage_prices (
  workspace text PRIMARY KEY,
  price_key text NOT NULL
);
-- How far the session's entries are counted (sessiond_usage_heads' head
-- and incarnation, written with it), on the session's row: a report finds
-- the sessions appended to since by a scan of the workspace's rows
-- comparing two integers each, instead of a join with the heads. Not
-- indexed, so that appends stay HOT updates; NULL: never counted.
ALTER TABLE sessiond_sessions ADD COLUMN usage_head integer, ADD COLUMN usage_incarnation bigint;
`,
  },
  {
    version: 16,
    description: "trigram index of clear message entries only",
    sql: `
-- The trigram index of migration 5 took every message entry, sealed ones
-- too: a sealed payload's base64 is ~1,300 trigrams that occur nowhere
-- else, so each sealed append added a thousand GIN entries that no search
-- can use (PostgreSQL cannot look into ciphertext; search.ts decrypts the
-- sealed candidates instead), which made a sealed append ~4 x a clear one.
-- The index now holds the clear messages only. A payload is sealed when it
-- ends with {"@sealed":"<no quote>"}} (sealed-payload.ts): the kind, the
-- last key, holds only "@sealed", which no entry kind has as a field; a
-- clear message may hold {"@sealed":" inside a Struct (metadata, tool-call
-- arguments) but then a quote or a brace follows before the end. The
-- search's clear query says the same (search.ts candidatesQuery), so the
-- planner may use the index.
-- Rebuilt inside the migration's transaction, blocking writes to
-- sessiond_entries meanwhile: on a big table create it CONCURRENTLY by
-- hand first under another name, drop the old one and rename the new.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    DROP INDEX IF EXISTS sessiond_entries_text;
    EXECUTE 'CREATE INDEX sessiond_entries_text ON sessiond_entries
      USING gin (payload gin_trgm_ops)
      WHERE kind = ''message'' AND payload !~ ''[{]"@sealed":"[^"]*"[}][}]$''';
  END IF;
END $$;
`,
  },
  {
    version: 17,
    description: "search Bloom filters of sealed messages",
    sql: `
-- A sealed message's keyed Bloom filter of its trigrams
-- (postgres/search-bloom.ts), so that a text search rules out sealed
-- messages without opening them: the search reads (session, seq, filter)
-- from the narrow covering index below, not the rows. NULL for clear rows,
-- and for sealed rows written before this migration, which the search
-- opens as before: the second index finds those (a sealed payload ends
-- with {"@sealed":"<no quote>"}}, migration 16).
-- Adding the column rewrites nothing; each index scans the table once,
-- inside the migration's transaction (on a big table create them
-- CONCURRENTLY by hand first, under the same names).
ALTER TABLE sessiond_entries ADD COLUMN search_bloom bytea;
CREATE INDEX IF NOT EXISTS sessiond_entries_blooms
  ON sessiond_entries (workspace, session_id, seq) INCLUDE (search_bloom)
  WHERE search_bloom IS NOT NULL;
CREATE INDEX IF NOT EXISTS sessiond_entries_unfiltered
  ON sessiond_entries (workspace, session_id, seq)
  WHERE kind = 'message' AND search_bloom IS NULL
    AND payload ~ '[{]"@sealed":"[^"]*"[}][}]$';
`,
  },
  {
    version: 18,
    description: "checkpoints of sealed sessions",
    sql: `
-- A sealed session's checkpoint (checkpoint.ts): its opened payloads in
-- segments sealed under its data key (seal/checkpoint-segments.ts), each
-- bound to (workspace, session, first_seq, last_seq), so that a cold read
-- opens a few segments instead of every row. A cache: a row's content is
-- taken from it only when the row is the very one it was made of. No
-- clear content. Deleted with the session, and by every transaction that
-- rewrites its sealed payloads or destroys its key (redaction, erasure,
-- sessiond seal). A segment is base64 text, not bytea: the driver reads
-- bytea as hex text, and decoding 20 MB of hex (a 10,000-entry session)
-- took ~50 ms where base64 takes ~5. Ciphertext: not compressed.
CREATE TABLE sessiond_checkpoints (
  workspace  text    NOT NULL,
  session_id text    NOT NULL,
  first_seq  integer NOT NULL,
  last_seq   integer NOT NULL,
  segment    text    NOT NULL,
  PRIMARY KEY (workspace, session_id, first_seq),
  FOREIGN KEY (workspace, session_id)
    REFERENCES sessiond_sessions (workspace, session_id) ON DELETE CASCADE
);
ALTER TABLE sessiond_checkpoints ALTER COLUMN segment SET STORAGE EXTERNAL;
`,
  },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** Arbitrary constant key of the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 0x5e55_10d;

/** Brings the database to SCHEMA_VERSION; returns the version found before. */
export async function migrate(sql: Sql): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS sessiond_migrations (
      version     integer     PRIMARY KEY,
      description text        NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`;
    const [row] = await tx<
      { v: number | null }[]
    >`SELECT max(version) AS v FROM sessiond_migrations`;
    const current = row?.v ?? 0;
    if (current > SCHEMA_VERSION) {
      throw failedPrecondition(
        `the database schema is version ${current}, newer than this sessiond knows (${SCHEMA_VERSION}): upgrade sessiond, or point it at another database`,
      );
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO sessiond_migrations (version, description) VALUES (${m.version}, ${m.description})`;
    }
    return current;
  });
}
