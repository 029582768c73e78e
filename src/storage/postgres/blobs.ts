import postgres from "postgres";
import {
  aborted,
  dataLoss,
  failedPrecondition,
  isSessiondError,
  notFound,
} from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import type { BlobInfo, BlobStorage } from "../blobs.js";
import { newKey } from "../seal/aead.js";
import {
  BlobSealer,
  openSegments,
  openUploadChunk,
  sealBlob,
  sealedFileSize,
  sealUploadChunk,
  segmentSpan,
} from "../seal/blob-seal.js";
import type { PgContext, Q } from "./context.js";

/**
 * Largest chunk row: a blob (or an upload) is stored as rows of at most
 * this many bytes, keyed by the byte position where each starts, so that
 * a range read fetches only the rows it overlaps and no blob is ever one
 * bytea value (held twice in memory, and hex-encoded on the wire, by the
 * driver).
 */
export const BLOB_CHUNK = 1024 * 1024;

/** Tries of a store that raced with another replica storing the same blob. */
const RACE_TRIES = 3;

/**
 * Blobs of the PostgreSQL engine (migration 9, README "Blobs"):
 *
 *   sessiond_blobs        (workspace, sha256, upload) PK, size, touched_at
 *   sessiond_blob_chunks  (workspace, sha256, upload, pos) PK, data
 *                         FK -> sessiond_blobs ON DELETE / ON UPDATE CASCADE
 *
 * `upload` false is a stored blob, true an unfinished upload of the same
 * hash; both may exist at once. A blob's row and its chunks are written in
 * one transaction, so readers see all of it or nothing; a committed upload
 * becomes the blob by one UPDATE of its row's `upload` (the chunks follow by
 * the cascade, their data untouched). Deleting a row deletes its chunks in
 * the same statement. Every touch sets `touched_at` from the database's
 * clock (one clock for all replicas), and never back (`greatest`: a slow
 * touch committing after a later one).
 *
 * Sealed blobs (migration 14, SPEC §12, seal/blob-seal.ts): in a workspace
 * the engine seals (PgEncryption.workspaces), `put` stores the blob's
 * sealed form (the JSONL engine's: 64 KiB segments, each AES-256-GCM under
 * the workspace's blob data key with (workspace, sha256, index, last) as
 * associated data) in the chunk rows, with `sealed` true; `size` stays the
 * plaintext size and `sha256` the plaintext's hash, so dedup, stat and
 * reads by hash work as before, and a range read fetches and opens only
 * the segments it covers. The blob data key is random, wrapped by the
 * workspace's key through the key provider, one row of sessiond_blob_keys
 * per workspace (made at the first sealed blob). An upload begun in a
 * sealed workspace is sealed as it arrives (each chunk row one sealed upload
 * record, blob-seal.ts) and becomes the blob's sealed form when committed
 * (one transaction, read and sealed a row at a time). Blobs stored in clear
 * before sealing was turned on stay readable. Sealed bytes moved under
 * another hash or workspace do not open (DATA_LOSS naming the blob); with
 * no keyring, FAILED_PRECONDITION.
 */
export class PgBlobs implements BlobStorage {
  /** Unwrapped blob data keys, by workspace, with the wrapped form of the row they came from. */
  private readonly blobKeys = new Map<string, Promise<BlobKey>>();

  constructor(
    private readonly ctx: PgContext,
    /** Refuses a closed engine and applies the schema (the engine's `begin`). */
    private readonly ready: () => Promise<void>,
    /** Told the tables a key destruction left dead tuples in (the engine vacuums them). */
    private readonly erased: (tables: readonly string[]) => void = () => {},
  ) {}

  async stat(workspace: string, sha256: string, touch: boolean): Promise<number | undefined> {
    await this.ready();
    const { sql } = this.ctx;
    const rows = await this.ctx.db(touch ? "touching a blob" : "looking up a blob", () =>
      touch
        ? sql<{ size: number }[]>`
          UPDATE sessiond_blobs SET touched_at = greatest(touched_at, clock_timestamp())
          WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload
          RETURNING size::float8 AS size`
        : sql<{ size: number }[]>`
          SELECT size::float8 AS size FROM sessiond_blobs
          WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload`,
    );
    return rows[0]?.size;
  }

  /**
   * One that exists is touched (one statement). A new one is its row, then
   * its chunks, in one transaction; a replica storing the same blob at the
   * same time waits on the row's insert and then only touches it.
   */
  async put(workspace: string, sha256: string, data: Uint8Array): Promise<void> {
    await this.ready();
    const { sql } = this.ctx;
    let stored: Uint8Array | undefined;
    let key: BlobKey | undefined;
    for (let attempt = 1; ; attempt++) {
      if ((await this.stat(workspace, sha256, true)) !== undefined) return;
      if (stored === undefined && this.ctx.keys.seals(workspace)) {
        key = await this.blobKey(workspace, true);
        stored = sealBlob(key.key, workspace, sha256, data);
      }
      stored ??= data;
      const bytes = stored;
      const done = await this.ctx.db(`storing blob ${sha256}`, () =>
        sql.begin(async (tx) => {
          // Sealed under a key that is still the workspace's (not destroyed meanwhile).
          if (key !== undefined && !(await keyHeld(tx, workspace, key))) return "stale";
          const claimed = await tx`
            INSERT INTO sessiond_blobs (workspace, sha256, upload, size, touched_at, sealed)
            VALUES (${workspace}, ${sha256}, false, ${data.length}::int8, clock_timestamp(),
              ${bytes !== data})
            ON CONFLICT DO NOTHING
            RETURNING 1`;
          // Stored meanwhile by another put or commit: touched on the next turn.
          if (claimed.length === 0) return false;
          await insertChunks(tx, workspace, sha256, false, 0, bytes);
          // The blob's time is when it is complete, not when its transaction began.
          await tx`
            UPDATE sessiond_blobs SET touched_at = clock_timestamp()
            WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload`;
          return true;
        }),
      );
      if (done === "stale") {
        // The key was destroyed (the workspace erased) or rewrapped since it was read: again.
        this.blobKeys.delete(workspace);
        stored = undefined;
        key = undefined;
      } else if (done) return;
      // Only a blob deleted between the other writer's commit and our touch gets here twice.
      if (attempt >= RACE_TRIES) {
        throw aborted(
          `blob ${sha256} in workspace ${quote(workspace)} kept changing while being stored`,
        );
      }
    }
  }

  /**
   * One statement (one snapshot) for a blob in clear: the blob's row, and
   * the parts of the chunks that overlap the range, cut in the database. A
   * sealed blob: its row first, then (a second statement, checking the row
   * is the same) the sealed bytes of the segments covering the range,
   * opened here. The first statement assumes what the workspace stores now.
   */
  async read(workspace: string, sha256: string, offset: number, length: number) {
    await this.ready();
    const end = offset + Math.max(0, length);
    let size: number | undefined;
    if (this.ctx.keys.seals(workspace)) {
      const row = await this.row(workspace, sha256);
      if (row === undefined) throw blobNotFound(workspace, sha256);
      if (!row.sealed) return this.readClear(workspace, sha256, offset, end);
      size = row.size;
    } else {
      const clear = await this.fetch(workspace, sha256, offset, end);
      if (!clear.sealed) return checked(workspace, sha256, clear, offset, end);
      size = clear.size;
    }
    const span = segmentSpan(offset, end - offset, size);
    if (span === undefined) return Buffer.alloc(0);
    const cached = this.blobKeys.has(workspace);
    const key = await this.blobKey(workspace, false);
    const got = await this.fetch(workspace, sha256, span.fileStart, span.fileEnd);
    if (!got.sealed || got.size !== size) {
      throw aborted(`blob ${sha256} in workspace ${quote(workspace)} changed while being read`);
    }
    const bytes = checked(workspace, sha256, got, span.fileStart, span.fileEnd, true);
    try {
      return openSegments(key.key, workspace, sha256, size, bytes, offset, end - offset);
    } catch (err) {
      // A key kept from before the workspace's key was destroyed and made again: read it again.
      if (!cached || !isSessiondError(err, "DATA_LOSS")) throw err;
      this.blobKeys.delete(workspace);
      const fresh = await this.blobKey(workspace, false);
      return openSegments(fresh.key, workspace, sha256, size, bytes, offset, end - offset);
    }
  }

  private async readClear(workspace: string, sha256: string, start: number, end: number) {
    const got = await this.fetch(workspace, sha256, start, end);
    if (got.sealed) {
      throw aborted(`blob ${sha256} in workspace ${quote(workspace)} changed while being read`);
    }
    return checked(workspace, sha256, got, start, end);
  }

  private async row(workspace: string, sha256: string) {
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `looking up blob ${sha256}`,
      () => sql<{ size: number; sealed: boolean }[]>`
        SELECT size::float8 AS size, sealed FROM sessiond_blobs
        WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload`,
    );
    return rows[0];
  }

  /** The blob's row and the stored bytes [start, end) (in one statement); NOT_FOUND when absent. */
  private async fetch(
    workspace: string,
    sha256: string,
    start: number,
    end: number,
  ): Promise<Fetched> {
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `reading blob ${sha256}`,
      () =>
        sql<{ size: number; sealed: boolean; pos: number | null; data: Buffer | null }[]>`
        SELECT b.size::float8 AS size, b.sealed, c.pos::float8 AS pos,
          substring(c.data
            FROM (greatest(c.pos, ${start}::int8) - c.pos + 1)::int
            FOR (least(c.pos + octet_length(c.data), ${end}::int8)
              - greatest(c.pos, ${start}::int8))::int) AS data
        FROM sessiond_blobs b
        LEFT JOIN sessiond_blob_chunks c
          ON c.workspace = b.workspace AND c.sha256 = b.sha256 AND c.upload = b.upload
          AND c.pos > ${start - BLOB_CHUNK}::int8 AND c.pos < ${end}::int8
          AND c.pos + octet_length(c.data) > ${start}::int8
        WHERE b.workspace = ${workspace} AND b.sha256 = ${sha256} AND NOT b.upload
        ORDER BY c.pos`,
    );
    const first = rows[0];
    if (first === undefined) throw blobNotFound(workspace, sha256);
    const parts = rows.flatMap((r) => (r.data === null ? [] : [r.data]));
    const data = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    return { size: first.size, sealed: first.sealed, data };
  }

  /**
   * The workspace's blob data key: its row unwrapped, or (with `create`)
   * made, wrapped and inserted when there is none (a racing replica's row
   * wins). FAILED_PRECONDITION without a keyring or (reading) without a row.
   */
  private blobKey(workspace: string, create: boolean): Promise<BlobKey> {
    const known = this.blobKeys.get(workspace);
    if (known !== undefined) return known;
    const made = this.loadKey(workspace, create);
    this.blobKeys.set(workspace, made);
    made.catch(() => this.blobKeys.delete(workspace));
    return made;
  }

  private async loadKey(workspace: string, create: boolean): Promise<BlobKey> {
    const provider = this.ctx.keys.provider;
    if (provider === undefined) {
      throw failedPrecondition(
        `the blobs of workspace ${quote(workspace)} are sealed but no keyring is configured (serve --keyring FILE)`,
      );
    }
    const context = { workspace, blobs: "workspace" };
    const { sql } = this.ctx;
    type KeyRow = { key_id: string; key_version: number; wrapped: string };
    const select = () =>
      this.ctx.db(
        `reading the blob key of workspace ${quote(workspace)}`,
        () => sql<KeyRow[]>`
          SELECT key_id, key_version, wrapped FROM sessiond_blob_keys
          WHERE workspace = ${workspace}`,
      );
    let [row] = await select();
    if (row === undefined) {
      if (!create) {
        throw failedPrecondition(
          `the blobs of workspace ${quote(workspace)} are sealed but its blob key is missing (no row in sessiond_blob_keys)`,
        );
      }
      const dataKey = newKey();
      const w = await provider.wrap(workspace, dataKey, context);
      const inserted = await this.ctx.db(
        `storing the blob key of workspace ${quote(workspace)}`,
        () => sql`
          INSERT INTO sessiond_blob_keys (workspace, key_id, key_version, wrapped)
          VALUES (${workspace}, ${w.keyId}, ${w.version}, ${w.wrapped})
          ON CONFLICT DO NOTHING
          RETURNING 1`,
      );
      if (inserted.length > 0) return { key: Buffer.from(dataKey), wrapped: w.wrapped };
      // Another replica made it first: that one is the key.
      [row] = await select();
      if (row === undefined) {
        throw aborted(`the blob key of workspace ${quote(workspace)} vanished while being made`);
      }
    }
    const key = await provider.unwrap(
      { keyId: row.key_id, version: row.key_version, wrapped: row.wrapped },
      context,
    );
    return { key: Buffer.from(key), wrapped: row.wrapped };
  }

  async uploaded(workspace: string, sha256: string): Promise<number> {
    await this.ready();
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `looking up the upload of blob ${sha256}`,
      () => sql<{ size: number }[]>`
        SELECT size::float8 AS size FROM sessiond_blobs
        WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`,
    );
    return rows[0]?.size ?? 0;
  }

  /**
   * One transaction: the upload's row (created at offset 0) locked, its
   * size checked against `offset`, the chunks added, the size moved on.
   * Two replicas appending the same bytes take turns; the second finds
   * the size moved and fails with FAILED_PRECONDITION saying it.
   */
  async appendUpload(workspace: string, sha256: string, offset: number, data: Uint8Array) {
    await this.ready();
    const { sql } = this.ctx;
    // An upload is sealed when begun in a sealed workspace (its row says, for the later chunks).
    const seals = this.ctx.keys.seals(workspace);
    if (seals) await this.blobKey(workspace, true);
    return this.ctx.db(`uploading blob ${sha256}`, () =>
      sql.begin(async (tx) => {
        if (offset === 0) {
          await tx`
            INSERT INTO sessiond_blobs (workspace, sha256, upload, size, touched_at, sealed)
            VALUES (${workspace}, ${sha256}, true, 0, clock_timestamp(), ${seals})
            ON CONFLICT DO NOTHING`;
        }
        const [row] = await tx<{ size: number; sealed: boolean }[]>`
          SELECT size::float8 AS size, sealed FROM sessiond_blobs
          WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload
          FOR UPDATE`;
        const held = row?.size ?? 0;
        if (row === undefined || held !== offset) {
          throw failedPrecondition(
            `the upload of blob ${sha256} in workspace ${quote(workspace)} holds ${held} bytes, not ${offset}`,
          );
        }
        if (row.sealed) {
          const key = await this.blobKey(workspace, true);
          if (!(await keyHeld(tx, workspace, key))) {
            this.blobKeys.delete(workspace);
            throw aborted(
              `the blob key of workspace ${quote(workspace)} changed during the upload of blob ${sha256}: retry`,
            );
          }
          await insertSealedUploadChunks(tx, key.key, workspace, sha256, offset, data);
        } else {
          await insertChunks(tx, workspace, sha256, true, offset, data);
        }
        await tx`
          UPDATE sessiond_blobs
          SET size = ${offset + data.length}::int8, touched_at = greatest(touched_at, clock_timestamp())
          WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`;
        return offset + data.length;
      }),
    );
  }

  /**
   * The upload's chunks go to `verify` one row at a time, in order (each
   * read by itself: a 32 MB upload is never in memory whole). Then one
   * transaction: the upload still as verified (locked), it becomes the
   * blob by an UPDATE of its row (chunks follow by the cascade); if the
   * blob exists already, the upload is dropped and the blob touched.
   */
  async commitUpload(
    workspace: string,
    sha256: string,
    verify: (chunks: AsyncIterable<Uint8Array>) => Promise<boolean>,
  ): Promise<boolean> {
    await this.ready();
    const found = await this.uploadSize(workspace, sha256);
    if (found === undefined) return false;
    const { size, sealed } = found;
    const key = sealed ? (await this.blobKey(workspace, false)).key : undefined;
    const ok = await verify(this.uploadChunks(this.ctx.sql, workspace, sha256, size, key));
    if (!ok) {
      await this.dropUpload(workspace, sha256);
      return false;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ctx.db(`storing the upload of blob ${sha256}`, () =>
          this.ctx.sql.begin((tx) =>
            key === undefined
              ? moveUpload(tx, workspace, sha256, size)
              : this.sealUpload(tx, key, workspace, sha256, size),
          ),
        );
      } catch (err) {
        // A put of the same blob committed between our look and our move: look again.
        if (!isUniqueViolation(err) || attempt >= RACE_TRIES) throw err;
      }
    }
  }

  private async uploadSize(
    workspace: string,
    sha256: string,
  ): Promise<{ size: number; sealed: boolean } | undefined> {
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `looking up the upload of blob ${sha256}`,
      () => sql<{ size: number; sealed: boolean }[]>`
        SELECT size::float8 AS size, sealed FROM sessiond_blobs
        WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`,
    );
    return rows[0];
  }

  /**
   * commitUpload's transaction for a sealed upload (its chunk rows are
   * upload records, sealed chunk by chunk): the blob's row, then its sealed
   * form made from the upload's chunks as they are read (one row at a
   * time, in rows of BLOB_CHUNK bytes), then the upload removed. A blob
   * there already is only touched.
   */
  private async sealUpload(
    tx: Q,
    key: Buffer,
    workspace: string,
    sha256: string,
    size: number,
  ): Promise<boolean> {
    const [upload] = await tx<{ size: number }[]>`
      SELECT size::float8 AS size FROM sessiond_blobs
      WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload
      FOR UPDATE`;
    if (upload === undefined || upload.size !== size)
      return moveUpload(tx, workspace, sha256, size);
    const touched = await tx`
      UPDATE sessiond_blobs SET touched_at = greatest(touched_at, clock_timestamp())
      WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload
      RETURNING 1`;
    if (touched.length === 0) {
      await tx`
        INSERT INTO sessiond_blobs (workspace, sha256, upload, size, touched_at, sealed)
        VALUES (${workspace}, ${sha256}, false, ${size}::int8, clock_timestamp(), true)`;
      const sealer = new BlobSealer(key, workspace, sha256, size);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let pos = 0;
      const flush = async (all: boolean) => {
        if (pendingBytes === 0) return;
        const bytes = Buffer.concat(pending);
        let at = 0;
        for (; bytes.length - at >= BLOB_CHUNK || (all && at < bytes.length); ) {
          const n = Math.min(BLOB_CHUNK, bytes.length - at);
          await insertChunks(tx, workspace, sha256, false, pos, bytes.subarray(at, at + n));
          pos += n;
          at += n;
        }
        const rest = bytes.subarray(at);
        pending = rest.length > 0 ? [rest] : [];
        pendingBytes = rest.length;
      };
      if (size === 0) pending.push(...sealer.push(Buffer.alloc(0)));
      for await (const chunk of this.uploadChunks(tx, workspace, sha256, size, key)) {
        for (const b of sealer.push(chunk)) {
          pending.push(b);
          pendingBytes += b.length;
        }
        if (pendingBytes >= BLOB_CHUNK) await flush(false);
      }
      pendingBytes = pending.reduce((n, b) => n + b.length, 0);
      await flush(true);
      if (pos !== sealedFileSize(size)) {
        throw aborted(
          `the upload of blob ${sha256} in workspace ${quote(workspace)} changed while being stored`,
        );
      }
    }
    await tx`
      DELETE FROM sessiond_blobs
      WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`;
    return true;
  }

  /** An upload's bytes in order, one chunk row per query; ends early at a gap (verify then fails). */
  private async *uploadChunks(
    sql: Q,
    workspace: string,
    sha256: string,
    size: number,
    key: Buffer | undefined,
  ): AsyncGenerator<Uint8Array> {
    for (let next = 0; next < size; ) {
      const [row] = await this.ctx.db(
        `reading the upload of blob ${sha256}`,
        () => sql<{ pos: number; data: Buffer }[]>`
          SELECT pos::float8 AS pos, data FROM sessiond_blob_chunks
          WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload
            AND pos >= ${next}::int8
          ORDER BY pos
          LIMIT 1`,
      );
      if (row === undefined || row.pos !== next || row.data.length === 0) return;
      const plain =
        key === undefined ? row.data : openUploadChunk(key, workspace, sha256, next, row.data);
      if (plain.length === 0) return;
      const data = next + plain.length > size ? plain.subarray(0, size - next) : plain;
      yield data;
      next += data.length;
    }
  }

  private async dropUpload(workspace: string, sha256: string): Promise<void> {
    const { sql } = this.ctx;
    await this.ctx.db(
      `removing the upload of blob ${sha256}`,
      () => sql`
        DELETE FROM sessiond_blobs
        WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`,
    );
  }

  async list(workspace: string): Promise<BlobInfo[]> {
    await this.ready();
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `listing the blobs of workspace ${quote(workspace)}`,
      () => sql<{ sha256: string; size: number; touched_ms: number; upload: boolean }[]>`
        SELECT sha256, size::float8 AS size, upload,
          (extract(epoch FROM touched_at) * 1000)::float8 AS touched_ms
        FROM sessiond_blobs WHERE workspace = ${workspace}`,
    );
    return rows.map((r) => ({
      sha256: r.sha256,
      size: r.size,
      touchedMs: r.touched_ms,
      upload: r.upload,
    }));
  }

  /**
   * One statement: the row goes only while untouched since the time (a
   * touch running meanwhile holds the row; the DELETE then re-checks the
   * time it set), its chunks with it by the cascade.
   */
  async delete(workspace: string, sha256: string, upload: boolean, untouchedBeforeMs: number) {
    await this.ready();
    const { sql } = this.ctx;
    const rows = await this.ctx.db(
      `removing blob ${sha256}`,
      () => sql`
        DELETE FROM sessiond_blobs
        WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload = ${upload}
          AND touched_at < to_timestamp(${untouchedBeforeMs}::float8 / 1000)
        RETURNING 1`,
    );
    return rows.length > 0;
  }
  /**
   * `sessiond keys rewrap`: the workspace's blob data key wrapped again
   * under its workspace key's current version (one UPDATE of its row, which
   * applies only to the row as read); no blob is rewritten. The versions it
   * was and is wrapped under; undefined when the workspace has no blob key.
   */
  async rewrapKey(workspace: string): Promise<{ from: number; to: number } | undefined> {
    await this.ready();
    const provider = this.ctx.keys.provider;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const { sql } = this.ctx;
    const [row] = await this.ctx.db(
      `reading the blob key of workspace ${quote(workspace)}`,
      () => sql<{ key_id: string; key_version: number; wrapped: string }[]>`
        SELECT key_id, key_version, wrapped FROM sessiond_blob_keys WHERE workspace = ${workspace}`,
    );
    if (row === undefined) return undefined;
    const current = await provider.currentVersion(row.key_id);
    if (current === row.key_version) return { from: current, to: current };
    const context = { workspace, blobs: "workspace" };
    const dataKey = await provider.unwrap(
      { keyId: row.key_id, version: row.key_version, wrapped: row.wrapped },
      context,
    );
    const w = await provider.wrap(row.key_id, dataKey, context);
    const done = await this.ctx.db(
      `rewrapping the blob key of workspace ${quote(workspace)}`,
      () => sql`
        UPDATE sessiond_blob_keys
        SET key_id = ${w.keyId}, key_version = ${w.version}, wrapped = ${w.wrapped}
        WHERE workspace = ${workspace} AND wrapped = ${row.wrapped}
        RETURNING 1`,
    );
    if (done.length === 0) {
      throw aborted(`the blob key of workspace ${quote(workspace)} changed while being rewrapped`);
    }
    // The same data key; the cached row's wrapped form is the old one.
    this.blobKeys.delete(workspace);
    return { from: row.key_version, to: w.version };
  }

  /**
   * `sessiond seal`: the workspace's blobs stored in clear, each sealed in
   * one transaction (its row locked, its chunks read, replaced by its sealed
   * form, `sealed` set): a crash leaves each blob whole in one form or the
   * other. Uploads in progress are left as they are. How many were sealed.
   */
  async sealExisting(workspace: string): Promise<number> {
    await this.ready();
    const { sql } = this.ctx;
    const clear = await this.ctx.db(
      `listing the clear blobs of workspace ${quote(workspace)}`,
      () => sql<{ sha256: string }[]>`
        SELECT sha256 FROM sessiond_blobs
        WHERE workspace = ${workspace} AND NOT upload AND NOT sealed
        ORDER BY sha256`,
    );
    let n = 0;
    for (const { sha256 } of clear) {
      for (let attempt = 1; ; attempt++) {
        const key = await this.blobKey(workspace, true);
        const done = await this.ctx.db(`sealing blob ${sha256}`, () =>
          sql.begin(async (tx) => {
            if (!(await keyHeld(tx, workspace, key))) return "stale";
            const [row] = await tx<{ size: number }[]>`
              SELECT size::float8 AS size FROM sessiond_blobs
              WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload AND NOT sealed
              FOR UPDATE`;
            if (row === undefined) return false;
            const chunks = await tx<{ data: Buffer }[]>`
              SELECT data FROM sessiond_blob_chunks
              WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload
              ORDER BY pos`;
            const data = Buffer.concat(chunks.map((c) => c.data));
            if (data.length !== row.size) {
              throw dataLoss(
                `blob ${sha256} in workspace ${quote(workspace)} is damaged: ${data.length} bytes stored instead of ${row.size}; not sealed`,
              );
            }
            const sealedBytes = sealBlob(key.key, workspace, sha256, data);
            await tx`
              DELETE FROM sessiond_blob_chunks
              WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload`;
            await insertChunks(tx, workspace, sha256, false, 0, sealedBytes);
            await tx`
              UPDATE sessiond_blobs SET sealed = true
              WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload`;
            return true;
          }),
        );
        if (done === "stale" && attempt < RACE_TRIES) {
          this.blobKeys.delete(workspace);
          continue;
        }
        if (done === "stale") {
          throw aborted(`the blob key of workspace ${quote(workspace)} kept changing: retry`);
        }
        if (done) n++;
        break;
      }
    }
    return n;
  }

  /**
   * Erasure of a whole workspace (SPEC §12): its blob data key destroyed,
   * in ONE transaction with every sealed blob and sealed upload of the
   * workspace (which no key opens any more): no row keeps key material or
   * sealed content. A put sealing under that key meanwhile holds the key row
   * (`keyHeld`) and is deleted with the rest, or finds the key gone and seals
   * under a new one. The tables' dead tuples are vacuumed with the
   * erasure's (the engine's `recordErasure`). Blobs stored in clear are the
   * erasure's business (store/erase.ts: those no session references).
   */
  async destroyKey(workspace: string): Promise<{ destroyed: boolean; blobs: number }> {
    await this.ready();
    const { sql } = this.ctx;
    const out = await this.ctx.db(`destroying the blob key of workspace ${quote(workspace)}`, () =>
      sql.begin(async (tx) => {
        const keys =
          await tx`DELETE FROM sessiond_blob_keys WHERE workspace = ${workspace} RETURNING 1`;
        const blobs = await tx`
          DELETE FROM sessiond_blobs WHERE workspace = ${workspace} AND sealed RETURNING 1`;
        return { destroyed: keys.length > 0, blobs: blobs.length };
      }),
    );
    this.blobKeys.delete(workspace);
    if (out.destroyed || out.blobs > 0) {
      this.erased(["sessiond_blob_keys", "sessiond_blob_chunks", "sessiond_blobs"]);
    }
    return out;
  }
}
/** A workspace's blob data key, unwrapped, and the wrapped form its row held. */
interface BlobKey {
  readonly key: Buffer;
  readonly wrapped: string;
}

/**
 * In a transaction: whether the workspace's key row is still the one `key`
 * was unwrapped from, locked (FOR SHARE) until COMMIT so that a destruction
 * of the key (`destroyKey`) waits for the blob written under it, and then
 * deletes it too.
 */
async function keyHeld(tx: Q, workspace: string, key: BlobKey): Promise<boolean> {
  const rows = await tx`
    SELECT 1 FROM sessiond_blob_keys
    WHERE workspace = ${workspace} AND wrapped = ${key.wrapped}
    FOR SHARE`;
  return rows.length > 0;
}

/** A blob's row and stored bytes of a range, as `fetch` reads them. */
interface Fetched {
  size: number;
  sealed: boolean;
  data: Buffer;
}

function blobNotFound(workspace: string, sha256: string): Error {
  return notFound(`blob ${sha256} not found in workspace ${quote(workspace)}`);
}

/**
 * The bytes [start, end) fetched, cut at the stored size (the plaintext
 * size; for sealed bytes `end` is exact already); DATA_LOSS when rows are
 * missing.
 */
function checked(
  workspace: string,
  sha256: string,
  got: Fetched,
  start: number,
  end: number,
  sealed = false,
): Buffer {
  const want = Math.max(0, (sealed ? end : Math.min(end, got.size)) - start);
  if (got.data.length !== want) {
    throw dataLoss(
      `blob ${sha256} in workspace ${quote(workspace)} is damaged: ${got.data.length} bytes at ${start} instead of ${want}`,
    );
  }
  return got.data;
}

/** Rows of at most BLOB_CHUNK bytes, one INSERT each (one chunk hex-encoded at a time). */
async function insertChunks(
  tx: Q,
  workspace: string,
  sha256: string,
  upload: boolean,
  at: number,
  data: Uint8Array,
): Promise<void> {
  for (let i = 0; i < data.length; i += BLOB_CHUNK) {
    const n = Math.min(BLOB_CHUNK, data.length - i);
    const chunk = Buffer.from(data.buffer, data.byteOffset + i, n);
    await tx`
      INSERT INTO sessiond_blob_chunks (workspace, sha256, upload, pos, data)
      VALUES (${workspace}, ${sha256}, ${upload}, ${at + i}::int8, ${chunk})`;
  }
}

/**
 * A sealed upload's chunks: rows of at most BLOB_CHUNK bytes of plaintext,
 * each row's data one sealed upload record's sealed part (blob-seal.ts:
 * AD binds the workspace, hash and offset), keyed by its plaintext offset.
 */
async function insertSealedUploadChunks(
  tx: Q,
  key: Buffer,
  workspace: string,
  sha256: string,
  at: number,
  data: Uint8Array,
): Promise<void> {
  for (let i = 0; i < data.length; i += BLOB_CHUNK) {
    const n = Math.min(BLOB_CHUNK, data.length - i);
    const chunk = Buffer.from(data.buffer, data.byteOffset + i, n);
    // The record's 4-byte length is the row's business here: its sealed part only.
    const sealed = sealUploadChunk(key, workspace, sha256, at + i, chunk).subarray(4);
    await tx`
      INSERT INTO sessiond_blob_chunks (workspace, sha256, upload, pos, data)
      VALUES (${workspace}, ${sha256}, true, ${at + i}::int8, ${sealed})`;
  }
}

/** commitUpload's transaction, after a good check; see there. */
async function moveUpload(
  tx: Q,
  workspace: string,
  sha256: string,
  size: number,
): Promise<boolean> {
  const [upload] = await tx<{ size: number }[]>`
    SELECT size::float8 AS size FROM sessiond_blobs
    WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload
    FOR UPDATE`;
  const touched = await tx`
    UPDATE sessiond_blobs SET touched_at = greatest(touched_at, clock_timestamp())
    WHERE workspace = ${workspace} AND sha256 = ${sha256} AND NOT upload
    RETURNING 1`;
  if (upload === undefined) {
    // Committed by another replica meanwhile (then the blob is there), or removed.
    if (touched.length > 0) return true;
    throw aborted(
      `the upload of blob ${sha256} in workspace ${quote(workspace)} was removed while being checked`,
    );
  }
  if (upload.size !== size) {
    throw aborted(
      `the upload of blob ${sha256} in workspace ${quote(workspace)} changed while being checked`,
    );
  }
  if (touched.length > 0) {
    await tx`
      DELETE FROM sessiond_blobs
      WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`;
    return true;
  }
  await tx`
    UPDATE sessiond_blobs SET upload = false, touched_at = clock_timestamp()
    WHERE workspace = ${workspace} AND sha256 = ${sha256} AND upload`;
  return true;
}

/** A duplicate key: the blob's row was inserted by another transaction first. */
function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof postgres.PostgresError && e.code === "23505") return true;
  }
  return false;
}
