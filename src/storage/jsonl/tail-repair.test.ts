import { readdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { errno, instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { type FsOps, nodeFs } from "./fs-ops.js";
import { brokenName, repairTail } from "./repair.js";

/**
 * `repairTail` on its own, through an injected FsOps: the order of its
 * durable steps (the tail saved aside and synced before the file is cut,
 * the cut synced before anything is written behind it), what the
 * `noFsync` switch leaves out, and the saved copy's name when an earlier
 * one already has it.
 */

const GOOD = "line one\nline two\n";
const TAIL = '{"seq":3,"crc":"00';
const NOW = new Date("2026-03-04T05:06:07.089Z");

describe("torn-tail repair", () => {
  let dir: string;
  let file: string;

  beforeEach(async () => {
    dir = await tempDir();
    file = path.join(dir, "s.jsonl");
    await writeFile(file, GOOD + TAIL);
    vi.useFakeTimers({ toFake: ["Date"], now: NOW });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await removeDir(dir);
  });

  /** Runs the repair of `file` (its good part is GOOD) with `ops`. */
  async function repair(ops: FsOps = nodeFs, noFsync?: boolean): Promise<string> {
    const fd = await nodeFs.open(file, "r+");
    try {
      const o = noFsync === undefined ? undefined : { noFsync };
      return await repairTail(ops, file, fd, GOOD.length, Buffer.from(TAIL), o);
    } finally {
      await nodeFs.close(fd);
    }
  }

  /** The durable calls of a repair, in order, each naming what it applies to. */
  function syncLog() {
    const fs = instrumentedFs();
    const calls: string[] = [];
    const names = new Map<number, string>();
    const what = (fd: number) => names.get(fd) ?? "the file";
    fs.hooks.open = async (p: string, flags: string) => {
      const fd = await nodeFs.open(p, flags);
      names.set(fd, p === dir ? "the directory" : path.basename(p));
      return fd;
    };
    fs.hooks.write = (fd: number) => {
      calls.push(`write ${what(fd)}`);
      return undefined;
    };
    fs.hooks.fsync = (fd: number) => {
      calls.push(`fsync ${what(fd)}`);
      return undefined;
    };
    fs.hooks.fdatasync = (fd: number) => {
      calls.push(`fdatasync ${what(fd)}`);
      return undefined;
    };
    fs.hooks.ftruncate = (fd: number, length: number) => {
      calls.push(`ftruncate ${what(fd)} to ${length}`);
      return undefined;
    };
    return { ops: fs.ops, calls };
  }

  it("the saved copy's name is the file's plus .broken-<ISO time> without colons", () => {
    expect(brokenName("/d/s.jsonl", NOW)).toBe("/d/s.jsonl.broken-2026-03-04T05-06-07.089Z");
  });

  it("the tail is saved aside and synced, with its name, before the file is cut, and the cut is fdatasynced", async () => {
    const { ops, calls } = syncLog();
    const saved = await repair(ops);
    const copy = path.basename(saved);
    expect(calls).toEqual([
      `write ${copy}`,
      `fsync ${copy}`,
      "fsync the directory",
      `ftruncate the file to ${GOOD.length}`,
      "fdatasync the file",
    ]);
    expect(await readFile(saved, "utf8")).toBe(TAIL);
    expect(await readFile(file, "utf8")).toBe(GOOD);
  });

  it("with noFsync (negative control) the repair cuts the file without any fsync or fdatasync", async () => {
    const { ops, calls } = syncLog();
    const saved = await repair(ops, true);
    expect(calls).toEqual([
      `write ${path.basename(saved)}`,
      `ftruncate the file to ${GOOD.length}`,
    ]);
    expect(await readFile(saved, "utf8")).toBe(TAIL);
    expect(await readFile(file, "utf8")).toBe(GOOD);
  });

  it("noFsync: false syncs like the default", async () => {
    const { ops, calls } = syncLog();
    await repair(ops, false);
    expect(calls.filter((c) => c.startsWith("fsync") || c.startsWith("fdatasync"))).toHaveLength(3);
  });

  it("a tail saved earlier under the same name is kept: the new one goes to <name>-1, then <name>-2", async () => {
    const base = brokenName(file, NOW);
    await writeFile(base, "an earlier tail");
    expect(await repair()).toBe(`${base}-1`);
    await writeFile(file, GOOD + TAIL);
    expect(await repair()).toBe(`${base}-2`);
    expect(await readFile(base, "utf8")).toBe("an earlier tail");
    expect(await readFile(`${base}-1`, "utf8")).toBe(TAIL);
    expect(await readFile(`${base}-2`, "utf8")).toBe(TAIL);
    expect(await readFile(file, "utf8")).toBe(GOOD);
  });

  it("the first repair of a second takes the plain .broken-<time> name", async () => {
    expect(await repair()).toBe(brokenName(file, NOW));
  });

  it("when 100 numbered names are taken too, the repair fails with EEXIST and leaves the file uncut", async () => {
    const fs = instrumentedFs();
    let attempts = 0;
    fs.hooks.open = (p: string) => {
      if (!p.includes(".broken-")) return undefined;
      attempts++;
      if (attempts > 200) throw errno("ELOOP");
      throw errno("EEXIST");
    };
    await expect(repair(fs.ops)).rejects.toMatchObject({ code: "EEXIST" });
    expect(attempts).toBe(101);
    expect(await readFile(file, "utf8")).toBe(GOOD + TAIL);
  });

  it("every file the repair opens is closed again, also when writing the saved copy fails", async () => {
    const failing = instrumentedFs();
    failing.hooks.write = () => {
      throw errno("ENOSPC");
    };
    await expect(repair(failing.ops)).rejects.toMatchObject({ code: "ENOSPC" });
    expect(failing.counts.open).toBe(1);
    expect(failing.counts.close).toBe(1);
    expect(await readFile(file, "utf8")).toBe(GOOD + TAIL);

    // (the failed copy stays; the next repair takes the next name, one open more)
    const ok = instrumentedFs();
    await repair(ok.ops);
    expect(ok.counts.open).toBe(3); // <name>: EEXIST, <name>-1, the directory
    expect(ok.counts.close).toBe(2);
  });

  it("a failure to create the saved copy other than EEXIST fails the repair at once, file uncut", async () => {
    const fs = instrumentedFs();
    let attempts = 0;
    fs.hooks.open = (p: string) => {
      if (!p.includes(".broken-")) return undefined;
      attempts++;
      throw errno("ENOSPC");
    };
    await expect(repair(fs.ops)).rejects.toMatchObject({ code: "ENOSPC" });
    expect(attempts).toBe(1);
    expect(await readFile(file, "utf8")).toBe(GOOD + TAIL);
    expect((await readdir(dir)).sort()).toEqual(["s.jsonl"]);
  });
});
