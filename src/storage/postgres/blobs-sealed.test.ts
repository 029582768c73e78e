import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { isSessiondError } from "../../core/errors.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { BLOB_CHUNK } from "./blobs.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * Sealed blobs on PostgreSQL (blobs.ts, migration 14): in a sealed
 * workspace a blob's content is not in the database (pg_dump, where bytea
 * shows as hex), reads of any range give the plaintext, sealed bytes moved
 * to another hash fail with DATA_LOSS naming the blob, and an engine with
 * no keyring gets FAILED_PRECONDITION.
 */

const run = promisify(execFile);
const WS = "vault";
const MARKER = "BLOBSEAL-PG-MARKER-77ee";

async function dump(url: string): Promise<string> {
  return (await run("pg_dump", ["--data-only", url], { maxBuffer: 256 << 20 })).stdout;
}

/** A blob of `size` bytes holding MARKER at its start, middle and end. */
function blobOf(size: number, seed: number): { data: Buffer; sha256: string } {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + seed) & 0xff;
  for (const at of [0, Math.floor(size / 2), size - MARKER.length]) data.write(MARKER, at);
  return { data, sha256: createHash("sha256").update(data).digest("hex") };
}

function hex(s: string): string {
  return Buffer.from(s).toString("hex");
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as Error,
  );
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL sealed blob tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("sealed blobs on PostgreSQL", () => {
    let keyDir: string;
    let keys: LocalKeyring;
    const engines: PostgresEngine[] = [];
    let url: string;
    let admin: Awaited<ReturnType<typeof openPostgres>>["admin"];
    let sealedEngine: PostgresEngine;
    // Four 64 KiB segments and a bit, and one over two chunk rows.
    const small = blobOf(200_000, 1);
    const large = blobOf(BLOB_CHUNK + 300_000, 2);

    const engine = async (
      encryption?: ConstructorParameters<typeof PostgresEngine>[0]["encryption"],
    ) => {
      const e = await PostgresEngine.open({ url, encryption });
      engines.push(e);
      return e;
    };

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgblobkeys-"));
      keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const o = await openPostgres({ encryption: { keys, workspaces: [WS] } });
      engines.push(o.engine);
      url = o.url;
      admin = o.admin;
      await admin`TRUNCATE sessiond_blob_keys`;
      sealedEngine = o.engine;
      await sealedEngine.blobs.put(WS, small.sha256, small.data);
      await sealedEngine.blobs.put(WS, large.sha256, large.data);
    });

    afterEach(async () => {
      for (const e of engines.splice(0)) await e.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    it("a marker inside a blob of a sealed workspace is not in pg_dump; in a clear workspace it is", async () => {
      const clear = blobOf(1000, 3);
      await sealedEngine.blobs.put("open", clear.sha256, clear.data);
      const text = await dump(url);
      // bytea is dumped as hex: the clear workspace's blob shows the marker that way.
      expect(text).toContain(hex(MARKER));
      const sealedRows = text
        .split("\n")
        .filter((l) => l.startsWith(`${WS}\t`))
        .join("\n");
      expect(sealedRows).toContain(small.sha256);
      expect(sealedRows).not.toContain(hex(MARKER));
      expect(sealedRows).not.toContain(MARKER);
      const rows = await admin<{ sha256: string; size: string; sealed: boolean }[]>`
        SELECT sha256, size::text AS size, sealed FROM sessiond_blobs
        WHERE workspace = ${WS} ORDER BY sessiond_blobs.size`;
      // Named and sized by the plaintext.
      expect(rows.map((r) => [r.sha256, Number(r.size), r.sealed])).toEqual([
        [small.sha256, small.data.length, true],
        [large.sha256, large.data.length, true],
      ]);
      const [key] = await admin<{ n: number }[]>`SELECT count(*)::int AS n FROM sessiond_blob_keys`;
      expect(key?.n).toBe(1);
    });

    it("GetBlob of any offset and length gives the plaintext, on this engine and another with the keyring", async () => {
      const other = await engine({ keys, workspaces: [WS] });
      // An engine that does not seal the workspace (any more) reads them too.
      const notSealing = await engine({ keys, workspaces: [] });
      const ranges: [number, number][] = [
        [0, 1 << 30],
        [0, 0],
        [1, 10],
        [65_530, 20],
        [65_536, 65_536],
        [131_000, 100_000],
        [199_990, 100],
        [200_000, 5],
        [250_000, 5],
      ];
      for (const e of [sealedEngine, other, notSealing]) {
        for (const [offset, length] of ranges) {
          const got = Buffer.from(await e.blobs.read(WS, small.sha256, offset, length));
          const want = small.data.subarray(offset, Math.min(small.data.length, offset + length));
          expect(got.equals(want), `${offset}+${length}`).toBe(true);
        }
        for (const [offset, length] of [
          [0, 1 << 30],
          [BLOB_CHUNK - 10, 70_000],
          [BLOB_CHUNK + 299_990, 50],
        ] as [number, number][]) {
          const got = Buffer.from(await e.blobs.read(WS, large.sha256, offset, length));
          const want = large.data.subarray(offset, Math.min(large.data.length, offset + length));
          expect(got.equals(want), `large ${offset}+${length}`).toBe(true);
        }
        expect(await e.blobs.stat(WS, small.sha256, false)).toBe(small.data.length);
      }
      // Stored sealed: the chunk rows are not the plaintext.
      const [chunk] = await admin<{ data: Buffer }[]>`
        SELECT data FROM sessiond_blob_chunks WHERE workspace = ${WS} AND sha256 = ${small.sha256}`;
      expect(chunk?.data.includes(Buffer.from(MARKER))).toBe(false);
      // Dedup: the same blob again is only touched.
      await other.blobs.put(WS, small.sha256, small.data);
      const listed = await other.blobs.list(WS);
      expect(listed.map((b) => b.size).sort((a, b) => a - b)).toEqual([
        small.data.length,
        large.data.length,
      ]);
      // A blob stored in clear before sealing was turned on stays readable.
      const old = blobOf(5000, 4);
      await notSealing.blobs.put(WS, old.sha256, old.data);
      const back = Buffer.from(await sealedEngine.blobs.read(WS, old.sha256, 100, 4000));
      expect(back.equals(old.data.subarray(100, 4100))).toBe(true);
    });

    it("a chunked upload in a sealed workspace is sealed while it arrives and once committed", async () => {
      const up = blobOf(BLOB_CHUNK + 250_000, 5);
      const cuts = [0, 100_000, BLOB_CHUNK + 150_000, up.data.length];
      for (let i = 0; i + 1 < cuts.length; i++) {
        const at = cuts[i] as number;
        const held = await sealedEngine.blobs.appendUpload(
          WS,
          up.sha256,
          at,
          up.data.subarray(at, cuts[i + 1]),
        );
        expect(held).toBe(cuts[i + 1]);
      }
      expect(await sealedEngine.blobs.uploaded(WS, up.sha256)).toBe(up.data.length);
      const during = await dump(url);
      expect(during).not.toContain(hex(MARKER));
      // Another engine with the keyring checks and commits it.
      const other = await engine({ keys, workspaces: [WS] });
      const ok = await other.blobs.commitUpload(WS, up.sha256, async (chunks) => {
        const h = createHash("sha256");
        for await (const c of chunks) h.update(c);
        return h.digest("hex") === up.sha256;
      });
      expect(ok).toBe(true);
      expect(await dump(url)).not.toContain(hex(MARKER));
      const rows = await admin<{ upload: boolean; sealed: boolean }[]>`
        SELECT upload, sealed FROM sessiond_blobs WHERE workspace = ${WS} AND sha256 = ${up.sha256}`;
      expect(rows).toEqual([{ upload: false, sealed: true }]);
      for (const [offset, length] of [
        [0, 1 << 30],
        [99_990, 20],
        [BLOB_CHUNK + 200_000, 100_000],
      ] as [number, number][]) {
        const got = Buffer.from(await sealedEngine.blobs.read(WS, up.sha256, offset, length));
        const want = up.data.subarray(offset, Math.min(up.data.length, offset + length));
        expect(got.equals(want), `${offset}+${length}`).toBe(true);
      }
    });

    it("a sealed blob moved to another hash by hand fails with DATA_LOSS naming the blob", async () => {
      const other = "ab".repeat(32);
      await admin`UPDATE sessiond_blobs SET sha256 = ${other}
        WHERE workspace = ${WS} AND sha256 = ${small.sha256}`;
      for (const [offset, length] of [
        [0, 100],
        [150_000, 10],
      ] as [number, number][]) {
        const err = await failure(sealedEngine.blobs.read(WS, other, offset, length));
        expect(isSessiondError(err, "DATA_LOSS"), String(err)).toBe(true);
        expect(err.message).toContain(other);
        expect(err.message).toContain(WS);
      }
    });

    it("an engine without the keyring gets FAILED_PRECONDITION reading a sealed blob", async () => {
      const bare = await engine();
      const err = await failure(bare.blobs.read(WS, small.sha256, 0, 100));
      expect(isSessiondError(err, "FAILED_PRECONDITION"), String(err)).toBe(true);
      expect(err.message).toContain(WS);
      expect(err.message).toMatch(/keyring/);
      // Stat and list need no key: names and sizes are in clear.
      expect(await bare.blobs.stat(WS, small.sha256, false)).toBe(small.data.length);
    });
  });
}
