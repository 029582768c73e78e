import { mkdir, readdir, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, tempDir, WS } from "../../../test/support/jsonl/fixtures.js";
import {
  decodeIndex,
  encodeIndex,
  LISTING_INDEX_NAME,
  ListingIndexFile,
  type LoadedFile,
  type SavedFile,
} from "./listing-index-file.js";

/** The index file's format: what is written is read back, and nothing else is. */

const files: SavedFile[] = [
  {
    sub: false,
    id: "a",
    key: { ino: 12, birth: 1700000000000.25, size: 300, mtime: 1700000000100.5 },
    rootId: "r1",
    createdAtMs: 1700000000000,
    parent: "",
    payload: '{"id":"r1","seq":"1","sessionInfo":{"sessionId":"a","title":"ünïcode ✓"}}',
    record: {
      size: 420,
      mtime: 1700000000200.75,
      title: "a title",
      tags: { user: "u1", "team.name": "" },
      headSeq: 4,
      leafId: "m4",
      messageCount: 3,
      updatedAtMs: 1700000000300,
      health: "ok",
      healthDetail: "",
      rootless: false,
    },
  },
  {
    sub: true,
    id: "b",
    key: { ino: 13, birth: 0, size: 10, mtime: 5 },
    rootId: "r2",
    createdAtMs: 0,
    parent: "a",
    payload: '{"id":"r2"}',
    record: {
      size: 11,
      mtime: 6,
      title: undefined,
      tags: {},
      headSeq: 1,
      leafId: "r2",
      messageCount: 0,
      updatedAtMs: 0,
      health: "corrupt",
      healthDetail: "line 2: bad",
      rootless: true,
    },
  },
  {
    sub: false,
    id: "c",
    key: { ino: 14, birth: 1, size: 2, mtime: 3 },
    rootId: "r3",
    createdAtMs: 7,
    parent: "",
    payload: "{}",
    record: undefined,
  },
];

/** Files as plain data, saved or loaded (the roots' JSON as text). */
const plain = (fs: readonly (SavedFile | LoadedFile)[] | undefined) =>
  fs?.map((f) => {
    const r = f.record;
    return {
      sub: f.sub,
      id: f.id,
      key: "key" in f ? f.key : { ino: f.ino, birth: f.birth, size: f.size, mtime: f.mtime },
      rootId: f.rootId,
      createdAtMs: f.createdAtMs,
      parent: f.parent,
      payload:
        "payload" in f && typeof f.payload === "string" ? f.payload : (f as LoadedFile).text(),
      record: r && {
        size: r.size,
        mtime: r.mtime,
        title: r.title,
        tags: r.tags,
        headSeq: r.headSeq,
        leafId: r.leafId,
        messageCount: r.messageCount,
        updatedAtMs: r.updatedAtMs,
        health: r.health,
        healthDetail: r.healthDetail,
        rootless: r.rootless,
      },
    };
  });

/** An index with a valid header and CRC around `tuples` (what a buggy writer could make). */
function wrapped(tuples: unknown, roots = ""): Buffer {
  const meta = Buffer.from(`${JSON.stringify(tuples)}\n`);
  const body = Buffer.concat([meta, Buffer.from(roots)]);
  const crc = crc32(body).toString(16).padStart(8, "0");
  const header = JSON.stringify({
    format: "sessiond.listing-index",
    version: 1,
    crc,
    bytes: body.length,
    files: meta.length - 1,
  });
  return Buffer.concat([Buffer.from(`${header}\n`), body]);
}

describe("listing index file format", () => {
  it("reads back what it wrote, roots' JSON included", () => {
    expect(plain(decodeIndex(encodeIndex(files), WS))).toEqual(plain(files));
  });

  it("an empty index is an index of no files", () => {
    expect(decodeIndex(encodeIndex([]), WS)).toEqual([]);
  });

  it("refuses bytes that a writer of this version did not write whole", () => {
    const good = encodeIndex(files);
    const cases: Buffer[] = [
      Buffer.alloc(0),
      good.subarray(0, good.length - 1),
      Buffer.concat([good, Buffer.from("x")]),
      Buffer.from(good.toString().replace('"version":1', '"version":2')),
      Buffer.from(good.toString().replace("sessiond.listing-index", "something.else")),
      // One flipped bit anywhere in the body.
      Buffer.from(good.map((b, i) => (i === good.length - 3 ? b ^ 4 : b))),
    ];
    for (const bytes of cases) expect(decodeIndex(bytes, WS)).toBeUndefined();
  });

  it("refuses a whole file whose entries are not of the shape this code writes", () => {
    const tuple = [0, "a", 1, 2, 3, 4, "r", 5, "", 0, 2];
    const record = [6, 7, null, { k: "v" }, 1, "l", 0, 8, null, 0];
    expect(decodeIndex(wrapped([tuple], "{}"), WS)?.length).toBe(1);
    expect(decodeIndex(wrapped([[...tuple, ...record]], "{}"), WS)?.[0]?.record?.tags).toEqual({
      k: "v",
    });
    const bad: unknown[] = [
      tuple.slice(0, 10),
      [...tuple, ...record.slice(0, 9)],
      [2, ...tuple.slice(1)],
      [0, 7, ...tuple.slice(2)],
      [...tuple.slice(0, 2), "1", ...tuple.slice(3)],
      [...tuple.slice(0, 9), 1, 2],
      [...tuple, ...record.slice(0, 3), { k: 1 }, ...record.slice(4)],
      [...tuple, ...record.slice(0, 9), 2],
      { sub: 0 },
    ];
    for (const t of bad) expect(decodeIndex(wrapped([tuple, t], "{}"), WS)).toBeUndefined();
    expect(decodeIndex(wrapped({ files: [] }), WS)).toBeUndefined();
  });
});

describe("ListingIndexFile", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir("sessiond-listing-index-file-");
    await mkdir(path.join(dataDir, WS));
  });
  afterEach(() => removeDir(dataDir));

  it("saves over the previous index and loads it; no index loads as none", async () => {
    const f = new ListingIndexFile(dataDir);
    expect(await f.load(WS)).toEqual([]);
    await f.save(WS, files.slice(0, 1));
    await f.save(WS, files);
    expect(plain(await f.load(WS))).toEqual(plain(files));
    expect(await readdir(path.join(dataDir, WS))).toEqual([LISTING_INDEX_NAME]);
  });

  it("a save that fails leaves no temp file and the previous index as it was", async () => {
    const ok = new ListingIndexFile(dataDir);
    await ok.save(WS, files.slice(0, 1));
    const failing = new ListingIndexFile(dataDir, {
      readFile: (p) => import("node:fs/promises").then((m) => m.readFile(p)),
      writeFile: (p, data) => writeFile(p, data, { flag: "wx" }),
      rename: async () => {
        throw Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
      },
      unlink: (p) => import("node:fs/promises").then((m) => m.unlink(p)),
      readdir: (d) => readdir(d),
      mtimeMs: async () => 0,
    });
    await expect(failing.save(WS, files)).rejects.toThrow(/EIO/);
    expect(await readdir(path.join(dataDir, WS))).toEqual([LISTING_INDEX_NAME]);
    expect(plain(await ok.load(WS))).toEqual(plain(files.slice(0, 1)));
  });

  it("removes the temp files of crashed saves once they are old, not a save in progress", async () => {
    const dir = path.join(dataDir, WS);
    const old = path.join(dir, ".listing-index-1-aaaa.tmp");
    const fresh = path.join(dir, ".listing-index-2-bbbb.tmp");
    const other = path.join(dir, ".something-else");
    for (const p of [old, fresh, other]) await writeFile(p, "x");
    const past = new Date(Date.now() - 120_000);
    await utimes(old, past, past);
    await utimes(other, past, past);
    await new ListingIndexFile(dataDir).removeStaleTemps(WS);
    expect((await readdir(dir)).sort()).toEqual([".listing-index-2-bbbb.tmp", ".something-else"]);
  });
});
