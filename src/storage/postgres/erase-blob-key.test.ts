import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import type postgres from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import type { PostgresEngine } from "./postgres-engine.js";

/**
 * Erasing a whole workspace on PostgreSQL destroys its blob key (SPEC
 * §12): the key row and the sealed blob rows go in one transaction, their
 * dead tuples are vacuumed with the erasure (the wrapped key is not in the
 * table's raw pages any more), a sealed row restored from before does not
 * open, and new sealed blobs get a new key.
 */

const run = promisify(execFile);
const WS = "vault";
const MARK = "ERASE-PG-BLOBKEY-MARKER-1f7c";

function blobOf(seed: string): { data: Buffer; sha256: string } {
  const data = Buffer.from(`${MARK} ${seed} `.repeat(3000));
  return { data, sha256: createHash("sha256").update(data).digest("hex") };
}

/** Whether `needle` is in any raw page of `rel` (dead tuples included). */
async function inPages(admin: postgres.Sql, rel: string, needle: string): Promise<boolean> {
  await admin`CREATE EXTENSION IF NOT EXISTS pageinspect`;
  const [size] = await admin<
    { n: string }[]
  >`SELECT pg_relation_size(${rel}::regclass) / 8192 AS n`;
  for (let b = 0; b < Number(size?.n); b++) {
    const [page] = await admin<{ p: Buffer }[]>`SELECT get_raw_page(${rel}, ${b}) AS p`;
    if (page?.p.includes(needle)) return true;
  }
  return false;
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL blob key erasure tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("erasing a whole PostgreSQL workspace destroys its blob key", () => {
    let keyDir: string;
    let engine: PostgresEngine;
    let admin: postgres.Sql;
    let url: string;
    let store: SessionStore;

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgerasekey-"));
      const keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const o = await openPostgres({ encryption: { keys, workspaces: [WS] } });
      engine = o.engine;
      admin = o.admin;
      url = o.url;
      store = new SessionStore(engine);
    });

    afterEach(async () => {
      await engine.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    it("the key row and sealed blobs go (pg_dump and raw pages), a restored row does not open, new blobs get a new key", async () => {
      await store.create({ workspace: WS, sessionId: "s1" });
      await (await store.open(WS, "s1")).append([user("u1", "hello")]);
      const blob = blobOf("one");
      await engine.blobs.put(WS, blob.sha256, blob.data);
      const [key] = await admin<{ wrapped: string }[]>`
        SELECT wrapped FROM sessiond_blob_keys WHERE workspace = ${WS}`;
      const wrapped = key?.wrapped as string;
      expect(wrapped.length).toBeGreaterThan(20);
      // A copy of the sealed rows, as a backup taken before would hold them.
      const chunks = await admin<{ pos: string; data: Buffer }[]>`
        SELECT pos::text AS pos, data FROM sessiond_blob_chunks WHERE workspace = ${WS}`;
      expect(chunks.length).toBeGreaterThan(0);
      expect(await inPages(admin, "sessiond_blob_keys", wrapped)).toBe(true);

      await store.erase({ workspace: WS, all: true, by: "dpo", why: "account closed" });

      const [n] = await admin<{ keys: number; blobs: number }[]>`
        SELECT (SELECT count(*)::int FROM sessiond_blob_keys WHERE workspace = ${WS}) AS keys,
               (SELECT count(*)::int FROM sessiond_blobs WHERE workspace = ${WS}) AS blobs`;
      expect(n).toEqual({ keys: 0, blobs: 0 });
      const { stdout } = await run("pg_dump", ["--data-only", url], { maxBuffer: 256 << 20 });
      expect(stdout).not.toContain(wrapped);
      expect(stdout).not.toContain(blob.sha256);
      // Vacuumed with the erasure: the wrapped key is not in the table's pages either.
      expect(await inPages(admin, "sessiond_blob_keys", wrapped)).toBe(false);

      // The sealed rows restored by hand (from a backup) do not open: no key.
      await admin`
        INSERT INTO sessiond_blobs (workspace, sha256, upload, size, touched_at, sealed)
        VALUES (${WS}, ${blob.sha256}, false, ${blob.data.length}, now(), true)`;
      for (const c of chunks) {
        await admin`
          INSERT INTO sessiond_blob_chunks (workspace, sha256, upload, pos, data)
          VALUES (${WS}, ${blob.sha256}, false, ${c.pos}::int8, ${c.data})`;
      }
      const err = await engine.blobs.read(WS, blob.sha256, 0, 100).catch((e: unknown) => e);
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
      await admin`DELETE FROM sessiond_blobs WHERE workspace = ${WS}`;

      // The workspace goes on: a new sealed blob under a new key.
      const next = blobOf("two");
      await engine.blobs.put(WS, next.sha256, next.data);
      const got = await engine.blobs.read(WS, next.sha256, 0, next.data.length);
      expect(Buffer.from(got).equals(next.data)).toBe(true);
      const [again] = await admin<{ wrapped: string }[]>`
        SELECT wrapped FROM sessiond_blob_keys WHERE workspace = ${WS}`;
      expect(again?.wrapped).not.toBe(wrapped);
    });

    it("erasing some sessions (not the workspace) keeps the blob key and its blobs readable", async () => {
      await store.create({ workspace: WS, sessionId: "s1" });
      const blob = blobOf("three");
      await engine.blobs.put(WS, blob.sha256, blob.data);
      await store.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo" });
      const got = await engine.blobs.read(WS, blob.sha256, 0, 10);
      expect(Buffer.from(got).toString()).toBe(blob.data.subarray(0, 10).toString());
    });
  });
}
