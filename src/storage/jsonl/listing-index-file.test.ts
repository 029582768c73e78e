import { mkdir, readdir, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, tempDir, WS } from "../../../test/support/jsonl/fixtures.js";
import { SAVED_FILES as files, plain } from "../../../test/support/jsonl/listing-index-fixtures.js";
import { LISTING_INDEX_NAME, ListingIndexFile } from "./listing-index-file.js";

/** The index file on disk: saved over the old one whole, loaded, and left clean when a save fails. */

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
