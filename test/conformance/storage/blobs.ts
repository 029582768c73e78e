/**
 * Storage conformance, blobs (`engine.blobs`, src/storage/blobs.ts): a put
 * blob reads back whole and in ranges, also after a reopen and from a
 * sibling; putting it again only touches it; workspaces are apart; an
 * upload grows chunk by chunk, is invisible as a blob until committed, and
 * a commit whose content fails the check leaves nothing; `delete` removes
 * only what was not touched since the given time.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectCode } from "../../support/fixtures.js";
import { type ConformanceSuite, WS } from "./harness.js";

function blob(size: number, seed: number): { sha: string; data: Uint8Array } {
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + seed * 7) & 0xff;
  return { sha: createHash("sha256").update(data).digest("hex"), data };
}

async function concat(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** Byte equality without vitest's element-by-element diff (slow for megabytes). */
function expectBytes(got: Uint8Array, want: Uint8Array): void {
  expect(got.length).toBe(want.length);
  expect(Buffer.compare(got, want), "bytes differ").toBe(0);
}

/** The "blobs" tests. */
export function describeBlobs(suite: ConformanceSuite): void {
  describe("blobs", () => {
    it("a stored blob reads back whole and by range, after a reopen and from a sibling", async () => {
      const b = blob(3 * 1024 * 1024 + 17, 1);
      expect(await suite.engine.blobs.stat(WS, b.sha, false)).toBeUndefined();
      await suite.engine.blobs.put(WS, b.sha, b.data);
      await suite.persisted(async (e) => {
        expect(await e.blobs.stat(WS, b.sha, false)).toBe(b.data.length);
        expectBytes(await e.blobs.read(WS, b.sha, 0, b.data.length), b.data);
        expectBytes(await e.blobs.read(WS, b.sha, 1000, 5), b.data.subarray(1000, 1005));
        // A range past the end gives what there is.
        expect((await e.blobs.read(WS, b.sha, b.data.length - 3, 100)).length).toBe(3);
      });
      if (suite.harness.sibling !== undefined) {
        const other = await suite.harness.sibling();
        expect(await other.blobs.stat(WS, b.sha, false)).toBe(b.data.length);
      }
    });

    it("keeps workspaces apart; a missing blob is NOT_FOUND naming it", async () => {
      const b = blob(1000, 2);
      await suite.engine.blobs.put("team-a", b.sha, b.data);
      expect(await suite.engine.blobs.stat("team-b", b.sha, false)).toBeUndefined();
      const err = await expectCode(suite.engine.blobs.read("team-b", b.sha, 0, 10), "NOT_FOUND");
      expect(err.message).toContain(b.sha);
      expect((await suite.engine.blobs.list("team-a")).map((i) => i.sha256)).toEqual([b.sha]);
      expect(await suite.engine.blobs.list("team-b")).toEqual([]);
    });

    it("putting a blob again keeps one copy and touches it", async () => {
      const b = blob(5000, 3);
      await suite.engine.blobs.put(WS, b.sha, b.data);
      const [first] = await suite.engine.blobs.list(WS);
      await new Promise((r) => setTimeout(r, 20));
      await suite.engine.blobs.put(WS, b.sha, b.data);
      const after = await suite.engine.blobs.list(WS);
      expect(after.length).toBe(1);
      expect(after[0]?.size).toBe(5000);
      expect(after[0]?.upload).toBe(false);
      expect(after[0]?.touchedMs).toBeGreaterThan(first?.touchedMs ?? Number.POSITIVE_INFINITY);
    });

    it("an upload grows by chunks, is no blob until committed, and a good commit makes it one", async () => {
      const b = blob(2_500_000, 4);
      const blobs = suite.engine.blobs;
      expect(await blobs.uploaded(WS, b.sha)).toBe(0);
      expect(await blobs.appendUpload(WS, b.sha, 0, b.data.subarray(0, 1_000_000))).toBe(1_000_000);
      expect(
        await blobs.appendUpload(WS, b.sha, 1_000_000, b.data.subarray(1_000_000, 2_000_000)),
      ).toBe(2_000_000);
      expect(await blobs.uploaded(WS, b.sha)).toBe(2_000_000);
      expect(await blobs.stat(WS, b.sha, false)).toBeUndefined();
      const listed = await blobs.list(WS);
      expect(listed.map((i) => [i.sha256, i.size, i.upload])).toEqual([[b.sha, 2_000_000, true]]);
      await blobs.appendUpload(WS, b.sha, 2_000_000, b.data.subarray(2_000_000));
      let seen: Uint8Array | undefined;
      expect(
        await blobs.commitUpload(WS, b.sha, async (chunks) => {
          seen = await concat(chunks);
          return true;
        }),
      ).toBe(true);
      expectBytes(seen ?? new Uint8Array(0), b.data);
      await suite.persisted(async (e) => {
        expect(await e.blobs.uploaded(WS, b.sha)).toBe(0);
        expect(await e.blobs.stat(WS, b.sha, false)).toBe(b.data.length);
        expectBytes(await e.blobs.read(WS, b.sha, 0, b.data.length), b.data);
        expect((await e.blobs.list(WS)).map((i) => i.upload)).toEqual([false]);
      });
    });

    it("a commit whose content fails the check leaves no blob and no upload", async () => {
      const b = blob(4096, 5);
      await suite.engine.blobs.appendUpload(WS, b.sha, 0, b.data);
      expect(await suite.engine.blobs.commitUpload(WS, b.sha, async () => false)).toBe(false);
      expect(await suite.engine.blobs.stat(WS, b.sha, false)).toBeUndefined();
      expect(await suite.engine.blobs.uploaded(WS, b.sha)).toBe(0);
      expect(await suite.engine.blobs.list(WS)).toEqual([]);
    });

    it("delete removes only what was not touched since the given time", async () => {
      const a = blob(100, 6);
      const u = blob(100, 7);
      await suite.engine.blobs.put(WS, a.sha, a.data);
      await suite.engine.blobs.appendUpload(WS, u.sha, 0, u.data.subarray(0, 50));
      const before = Date.now() - 60_000;
      expect(await suite.engine.blobs.delete(WS, a.sha, false, before)).toBe(false);
      expect(await suite.engine.blobs.delete(WS, u.sha, true, before)).toBe(false);
      await new Promise((r) => setTimeout(r, 20));
      const cut = Date.now();
      await new Promise((r) => setTimeout(r, 20));
      expect(await suite.engine.blobs.stat(WS, a.sha, true)).toBe(100); // touched after the cut
      expect(await suite.engine.blobs.delete(WS, a.sha, false, cut)).toBe(false);
      expect(await suite.engine.blobs.delete(WS, u.sha, true, cut)).toBe(true);
      expect(await suite.engine.blobs.delete(WS, a.sha, false, Date.now() + 1000)).toBe(true);
      expect(await suite.engine.blobs.stat(WS, a.sha, false)).toBeUndefined();
      expect(await suite.engine.blobs.uploaded(WS, u.sha)).toBe(0);
      expect(await suite.engine.blobs.delete(WS, a.sha, false, Date.now() + 1000)).toBe(false);
    });
  });
}
