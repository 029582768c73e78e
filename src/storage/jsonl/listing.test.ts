import { readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { TimestampSchema, timestampMs } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { Health } from "../../../gen/sessiond/v1/session_pb.js";
import { appendOf, rootEntry, settle, ts, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  seedSession,
  tempDir,
  WS,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { timestampJsonMs } from "../../core/codec/timestamp-json.js";
import { SessionStore } from "../../store/session-store.js";
import type { RootRecord } from "../engine.js";
import { type FsOps, nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { sessionsDir } from "./paths.js";
import { encodeRecord } from "./record.js";
import { RootIndex } from "./root-index.js";

/**
 * Listing reads first lines only: the roots of every session come from the
 * first line of each file (read once, then remembered), and whole files are
 * read for the sessions of the page only.
 */

/** An FsOps that counts calls per operation, and bytes read per file. */
function countingFs() {
  const calls: Record<string, number> = {};
  const bytesByFile = new Map<string, number>();
  const fdFile = new Map<number, string>();
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const ops: FsOps = {
    ...nodeFs,
    open: async (p, flags, mode) => {
      count("open");
      const fd = await nodeFs.open(p, flags, mode);
      fdFile.set(fd, p);
      return fd;
    },
    read: async (fd, buf, offset, length, position) => {
      count("read");
      const n = await nodeFs.read(fd, buf, offset, length, position);
      const file = fdFile.get(fd) ?? "?";
      bytesByFile.set(file, (bytesByFile.get(file) ?? 0) + n);
      return n;
    },
    stat: (p) => {
      count("stat");
      return nodeFs.stat(p);
    },
    readdir: (p) => {
      count("readdir");
      return nodeFs.readdir(p);
    },
  };
  const reset = () => {
    for (const k of Object.keys(calls)) delete calls[k];
    bytesByFile.clear();
  };
  return { ops, calls, bytesByFile, reset };
}

const N = 40;
const ENTRIES = 40;

/** A root and `n - 1` messages of about 500 bytes each, for one create. */
function sessionOf(id: string, n: number): Entry[] {
  const entries = [rootEntry(id)];
  for (let seq = 2; seq <= n; seq++) {
    const parentId = (entries[entries.length - 1] as Entry).id;
    entries.push(user(`m${seq}`, "y".repeat(500), { seq, parentId }));
  }
  return entries;
}

function ids(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `listed-${String(i).padStart(3, "0")}`);
}

describe("listing reads first lines only", () => {
  let dataDir: string;
  let fileSize: number;

  beforeEach(async () => {
    dataDir = await tempDir();
    await withEngine(dataDir, async (e) => {
      for (const id of ids(N)) await e.create(keyOf(id), sessionOf(id, ENTRIES));
    });
    fileSize = (await stat(fileOf(dataDir, keyOf("listed-000")))).size;
    expect(fileSize).toBeGreaterThan(3 * 4096);
    // Past the window in which a directory's mtime is too recent to be trusted.
    await settle(250);
  });
  afterEach(() => removeDir(dataDir));

  it("a cold listRoots reads one block of each file; a warm one reads nothing", async () => {
    const fs = countingFs();
    await withEngine(
      dataDir,
      async (e) => {
        const roots = await e.listRoots(WS);
        expect(roots.map((r) => r.sessionId).sort()).toEqual(ids(N));
        expect(roots.every((r) => r.health === "ok" && r.root?.id === `root-${r.sessionId}`)).toBe(
          true,
        );
        expect(fs.calls.open).toBe(N);
        expect(fs.calls.read).toBe(N);
        expect(fs.bytesByFile.size).toBe(N);
        for (const bytes of fs.bytesByFile.values()) expect(bytes).toBeLessThanOrEqual(4096);

        fs.reset();
        expect((await e.listRoots(WS)).length).toBe(N);
        expect((await e.listIds(WS)).length).toBe(N);
        // One stat per directory and call; no readdir, no file opened.
        expect(fs.calls).toEqual({ stat: 4 });
      },
      { fs: fs.ops },
    );
  });

  it("a store page loads only the page's sessions whole", async () => {
    const fs = countingFs();
    await withEngine(
      dataDir,
      async (e) => {
        const store = new SessionStore(e);
        const page = await store.list({ pageSize: 5, order: "oldest" });
        expect(page.sessions.map((s) => s.id)).toEqual(ids(N).slice(0, 5));
        expect(page.sessions.every((s) => s.entryCount === BigInt(ENTRIES))).toBe(true);
        const whole = [...fs.bytesByFile.values()].filter((b) => b >= fileSize);
        expect(whole).toHaveLength(5);
        expect(fs.bytesByFile.size).toBe(N);
        const total = [...fs.bytesByFile.values()].reduce((a, b) => a + b, 0);
        expect(total).toBeLessThanOrEqual(N * 4096 + 5 * fileSize);

        fs.reset();
        const next = await store.list({
          pageSize: 5,
          order: "oldest",
          pageToken: page.nextPageToken,
        });
        expect(next.sessions.map((s) => s.id)).toEqual(ids(N).slice(5, 10));
        expect([...fs.bytesByFile.values()].filter((b) => b >= fileSize)).toHaveLength(5);
        expect(fs.bytesByFile.size).toBe(5);
      },
      { fs: fs.ops },
    );
  });

  it("reads synchronously while reads are fast, and the rest in parallel once they are slow", async () => {
    const fs = countingFs();
    const sliced = new RootIndex(fs.ops, dataDir, { syncReads: true, sliceMs: 0, slowReadMs: 0 });
    const roots = await sliced.roots(WS);
    expect(roots.map((r) => r.sessionId).sort()).toEqual(ids(N));
    expect(roots.every((r) => r.health === "ok")).toBe(true);
    // Two slow slices of one synchronous read each (node:fs directly), then the injected ops.
    expect(fs.calls.open).toBe(N - 2);
    fs.reset();
    const sync = new RootIndex(fs.ops, dataDir, { syncReads: true });
    expect((await sync.roots(WS)).length).toBe(N);
    expect(fs.calls.open ?? 0).toBeLessThan(N);
  });

  it("re-reads a directory only when it changed, and reads only the new file", async () => {
    const fs = countingFs();
    await withEngine(
      dataDir,
      async (e) => {
        await e.listRoots(WS);
        await withEngine(dataDir, (other) => other.create(keyOf("late"), [rootEntry("late")]));
        fs.reset();
        const roots = await e.listRoots(WS);
        expect(roots.map((r) => r.sessionId)).toContain("late");
        expect(fs.calls.readdir).toBe(1);
        expect(fs.calls.open).toBe(1);
        expect([...fs.bytesByFile.keys()]).toEqual([fileOf(dataDir, keyOf("late"))]);
      },
      { fs: fs.ops },
    );
  });
});

describe("listing records without a stat per session", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir("sessiond-records-");
  });
  afterEach(() => removeDir(dataDir));

  it("a warm list stats no file while no change is reported, and sees another instance's change", async () => {
    const ids = ["r1", "r2", "r3"];
    // Spied before the engines are made: they take the file system's functions then.
    const stat = vi.spyOn(nodeFs, "stat");
    const writer = new JsonlEngine({ dataDir });
    const reader = new JsonlEngine({ dataDir });
    try {
      for (const id of ids) await seedSession(writer, keyOf(id), 2);
      const titles = async () =>
        Object.fromEntries((await reader.list(WS, ids)).map((r) => [r.sessionId, r.title]));
      expect(await titles()).toEqual({ r1: "title of r1", r2: "title of r2", r3: "title of r3" });
      expect(stat).toHaveBeenCalled();
      stat.mockClear();
      await titles();
      expect(stat).not.toHaveBeenCalled();
      stat.mockRestore();
      await writer.append(
        keyOf("r2"),
        appendOf([
          create(EntrySchema, {
            id: "t",
            kind: { case: "sessionInfo", value: { title: "renamed" } },
          }),
        ]),
      );
      await expect.poll(titles, { timeout: 5_000 }).toEqual({
        r1: "title of r1",
        r2: "renamed",
        r3: "title of r3",
      });
    } finally {
      stat.mockRestore();
      await writer.close();
      await reader.close();
    }
  });
});

describe("listing records of more sessions than the memo holds", () => {
  const CAP = 6;
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir("sessiond-memo-cap-");
  });
  afterEach(() => removeDir(dataDir));

  it("keeps the records it holds while listings go over more sessions, and reads only the rest whole", async () => {
    const all = ids(10);
    await withEngine(dataDir, async (e) => {
      for (const id of all) await seedSession(e, keyOf(id), 3);
    });
    const fs = countingFs();
    await withEngine(
      dataDir,
      async (e) => {
        const titles = async () => (await e.list(WS, all)).map((r) => r.title);
        const want = all.map((id) => `title of ${id}`);
        expect(await titles()).toEqual(want);
        const perFile = (fs.calls.open ?? 0) / all.length;
        expect(perFile).toBeGreaterThanOrEqual(1);
        for (let round = 0; round < 3; round++) {
          fs.reset();
          expect(await titles()).toEqual(want);
          // Evicting the oldest for each new record would read all 10 again every time.
          expect(fs.calls.open ?? 0).toBe(perFile * (all.length - CAP));
        }
      },
      { fs: fs.ops, listingRecords: CAP },
    );
  });

  it("forgets the records of sessions another process deleted, and takes those of new ones", async () => {
    const first = ids(CAP);
    const later = ["later-a", "later-b", "later-c"];
    await withEngine(dataDir, async (e) => {
      for (const id of first) await seedSession(e, keyOf(id), 2);
    });
    const fs = countingFs();
    const other = new JsonlEngine({ dataDir });
    try {
      await withEngine(
        dataDir,
        async (e) => {
          // As a store's listing does: the roots (a read of the directory), then the records.
          expect((await e.listRoots(WS)).length).toBe(CAP);
          expect((await e.list(WS, first)).length).toBe(CAP);
          // The memo is full. Another process deletes three sessions and creates three.
          for (const id of first.slice(0, 3)) await other.delete(keyOf(id));
          for (const id of later) await seedSession(other, keyOf(id), 2);
          const now = [...first.slice(3), ...later];
          // The listing reads the directory again and sees three ids gone.
          expect((await e.listRoots(WS)).map((r) => r.sessionId).sort()).toEqual([...now].sort());
          expect((await e.list(WS, now)).length).toBe(CAP);
          fs.reset();
          const again = await e.list(WS, now);
          expect(again.map((r) => r.title)).toEqual(now.map((id) => `title of ${id}`));
          // All six remembered: the new ones took the places of the deleted ones.
          expect(fs.calls.open ?? 0).toBe(0);
        },
        { fs: fs.ops, listingRecords: CAP },
      );
    } finally {
      await other.close();
    }
  });
});

describe("listing damaged and foreign files", () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  /** Writes raw bytes as the session file of `id`. */
  async function rawSession(id: string, bytes: Buffer | string): Promise<void> {
    await writeFile(fileOf(dataDir, keyOf(id)), bytes);
  }

  it("lists a file whose first line is invalid as CORRUPT, and ignores non-session files", async () => {
    await withEngine(dataDir, async (e) => {
      await seedSession(e, keyOf("healthy"), 3);
      await seedSession(e, keyOf("mid-file"), 5);
      await e.create(keyOf("child"), [rootEntry("child", { parentSessionId: "healthy" })]);
    });
    const good = await readFile(fileOf(dataDir, keyOf("healthy")));
    const starts = lineStarts(good);
    const line = (n: number) => good.subarray(starts[n - 1], starts[n]);
    // Damage in line 3 followed by intact records: the first line is fine.
    const mid = await readFile(fileOf(dataDir, keyOf("mid-file")));
    const midStarts = lineStarts(mid);
    await rawSession(
      "mid-file",
      Buffer.concat([
        mid.subarray(0, midStarts[2]),
        Buffer.from("garbage\n"),
        mid.subarray(midStarts[3]),
      ]),
    );
    const damaged: Record<string, Buffer | string> = {
      empty: "",
      garbage: Buffer.concat([Buffer.from("not a record\n"), line(2)]),
      torn: line(1).subarray(0, 40),
      "no-newline": line(1).subarray(0, line(1).length - 1),
      "seq-two": Buffer.concat([line(2), line(3)]),
      "flipped-crc": Buffer.from(line(1).toString().replace('"title of', '"title og')),
      "not-a-root": encodeRecord(user("m1", "hello", { seq: 1 })),
    };
    for (const [id, bytes] of Object.entries(damaged)) await rawSession(id, bytes);
    const dir = sessionsDir(dataDir, WS);
    for (const name of ["notes.txt", ".hidden.jsonl", "bad name.jsonl", "healthy.jsonl.broken-1"]) {
      await writeFile(path.join(dir, name), good);
    }

    await withEngine(dataDir, async (e) => {
      const roots = await e.listRoots(WS);
      const byId = new Map(roots.map((r) => [r.sessionId, r]));
      expect([...byId.keys()].sort()).toEqual(
        [...Object.keys(damaged), "child", "healthy", "mid-file"].sort(),
      );
      for (const id of Object.keys(damaged)) {
        const r = byId.get(id);
        expect(r?.health, id).toBe("corrupt");
        expect(r?.healthDetail, id).toContain("line 1");
        expect(r?.healthDetail, id).toContain(`"${id}"`);
        expect(r?.root, id).toBeUndefined();
        expect(r?.createdAtMs, id).toBe(0);
        expect(r?.parentSessionId, id).toBe("");
        // The reader agrees: a full read finds the session corrupt too.
        const [record] = await e.list(WS, [id]);
        expect(record?.health, id).toBe("corrupt");
      }
      expect(byId.get("healthy")?.health).toBe("ok");
      expect(byId.get("mid-file")?.health).toBe("ok");
      expect(byId.get("child")?.parentSessionId).toBe("healthy");

      // The store pages on roots and shows the page's health from full reads.
      const store = new SessionStore(e);
      const sessions = (await store.list({ pageSize: 100 })).sessions;
      const health = Object.fromEntries(sessions.map((s) => [s.id, s.health]));
      expect(Object.keys(health).sort()).toEqual(
        [...Object.keys(damaged), "healthy", "mid-file"].sort(),
      );
      for (const id of Object.keys(damaged)) expect(health[id], id).toBe(Health.CORRUPT);
      expect(health.healthy).toBe(Health.OK);
      expect(health["mid-file"]).toBe(Health.CORRUPT);
      const midMeta = sessions.find((s) => s.id === "mid-file");
      expect(midMeta?.healthDetail).toContain("line 3");
      expect(midMeta?.headSeq).toBe(2n);
    });
  });

  it("stays right under concurrent creates, deletes and listings", async () => {
    for (const fs of [undefined, { ...nodeFs }]) {
      const dir = await tempDir();
      try {
        await withEngine(
          dir,
          async (e) => {
            for (let i = 0; i < 30; i++) await e.create(keyOf(`old-${i}`), [rootEntry(`old-${i}`)]);
            const ops: Promise<unknown>[] = [];
            for (let i = 0; i < 30; i++) {
              ops.push(e.create(keyOf(`new-${i}`), [rootEntry(`new-${i}`)]));
              if (i % 2 === 0) ops.push(e.delete(keyOf(`old-${i}`)));
              if (i % 3 === 0) ops.push(e.listRoots(WS), e.listIds(WS));
            }
            const results = await Promise.all(ops);
            for (const r of results) {
              if (!Array.isArray(r)) continue;
              for (const x of r as (string | RootRecord)[]) {
                const id = typeof x === "string" ? x : x.sessionId;
                expect(id).toMatch(/^(old|new)-\d+$/);
                if (typeof x !== "string") expect(x.root?.id).toBe(`root-${id}`);
              }
            }
            const expected = [
              ...Array.from({ length: 30 }, (_, i) => `new-${i}`),
              ...Array.from({ length: 15 }, (_, i) => `old-${2 * i + 1}`),
            ].sort();
            expect((await e.listRoots(WS)).map((r) => r.sessionId).sort()).toEqual(expected);
            expect((await e.listIds(WS)).sort()).toEqual(expected);
            await withEngine(dir, async (fresh) => {
              expect((await fresh.listRoots(WS)).map((r) => r.sessionId).sort()).toEqual(expected);
            });
          },
          fs === undefined ? {} : { fs },
        );
      } finally {
        await removeDir(dir);
      }
    }
  });

  it("gives the same roots on the synchronous and the asynchronous path", async () => {
    await withEngine(dataDir, async (e) => {
      for (const id of ["s1", "s2", "s3"]) await seedSession(e, keyOf(id), 2);
      await e.create(keyOf("s4"), [rootEntry("s4", { parentSessionId: "s1" })]);
    });
    await rawSession("broken", "garbage\n");
    await rawSession("empty", "");
    const summary = (roots: RootRecord[]) =>
      roots
        .map((r) => [r.sessionId, r.health, r.healthDetail, r.createdAtMs, r.parentSessionId])
        .sort();
    const viaSync = await new RootIndex(nodeFs, dataDir, { syncReads: true }).roots(WS);
    const viaAsync = await new RootIndex(nodeFs, dataDir).roots(WS);
    expect(summary(viaSync)).toEqual(summary(viaAsync));
    expect(summary(viaSync)).toHaveLength(6);
    expect(viaSync.map((r) => r.root?.id ?? "").sort()).toEqual(
      viaAsync.map((r) => r.root?.id ?? "").sort(),
    );
  });

  it("reads a root longer than one block", async () => {
    const big = rootEntry("big-root", { metadata: { blob: "x".repeat(20_000) } });
    await withEngine(dataDir, async (e) => {
      await e.create(keyOf("big-root"), [big]);
      await e.append(keyOf("big-root"), appendOf([user("after-big")]));
    });
    for (const syncReads of [true, false]) {
      const [r] = await new RootIndex(nodeFs, dataDir, { syncReads }).roots(WS);
      expect(r?.health).toBe("ok");
      expect(r?.root?.id).toBe(big.id);
      const info = r?.root?.kind.case === "sessionInfo" ? r.root.kind.value : undefined;
      expect(info?.metadata?.blob).toHaveLength(20_000);
    }
    await rawSession(
      "long-torn",
      (await readFile(fileOf(dataDir, keyOf("big-root")))).subarray(0, 9000),
    );
    for (const syncReads of [true, false]) {
      const roots = await new RootIndex(nodeFs, dataDir, { syncReads }).roots(WS);
      expect(roots.find((r) => r.sessionId === "long-torn")?.health).toBe("corrupt");
    }
  });

  it("replaces the root of a session another process re-created, once it is read", async () => {
    await withEngine(dataDir, async (e) => {
      await e.create(keyOf("phoenix"), [rootEntry("phoenix", { id: "first" })]);
      expect((await e.listRoots(WS))[0]?.root?.id).toBe("first");
      await withEngine(dataDir, async (other) => {
        await other.delete(keyOf("phoenix"));
        await other.create(keyOf("phoenix"), [
          rootEntry("phoenix", { id: "second", timestamp: ts(1_900_000_000) }),
        ]);
      });
      const [record] = await e.list(WS, ["phoenix"]);
      expect(record?.root?.id).toBe("second");
      const [r] = await e.listRoots(WS);
      expect(r?.root?.id).toBe("second");
      expect(r?.createdAtMs).toBe(timestampMs(ts(1_900_000_000)));
    });
  });
});

describe("timestampJsonMs", () => {
  it("equals timestampMs(fromJson(Timestamp)) for every valid timestamp", () => {
    const min = -62_135_596_800n;
    const max = 253_402_300_799n;
    fc.assert(
      fc.property(
        fc.bigInt({ min, max }),
        fc.integer({ min: 0, max: 999_999_999 }),
        (seconds, nanos) => {
          const json = toJson(TimestampSchema, create(TimestampSchema, { seconds, nanos }));
          expect(timestampJsonMs(json)).toBe(timestampMs(fromJson(TimestampSchema, json)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("agrees on offsets, short fractions, and refuses what fromJson refuses", () => {
    for (const s of [
      "2026-01-01T10:00:00.5+02:00",
      "2026-01-01T10:00:00.0005-11:30",
      "1970-01-01T00:00:00Z",
      "0001-01-01T00:00:00Z",
      "9999-12-31T23:59:59.999999999Z",
      "2024-02-29T12:00:00.1Z",
      "2024-02-30T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2100-02-29T00:00:00Z",
      "2000-02-29T00:00:00.000000001Z",
      "0050-06-01T00:00:00Z",
      "2024-01-01T24:00:00Z",
      "2024-12-31T23:59:59.9999995Z",
    ]) {
      expect(timestampJsonMs(s), s).toBe(timestampMs(fromJson(TimestampSchema, s)));
    }
    for (const bad of [
      "2026-13-01T00:00:00Z",
      "2026-01-01 00:00:00Z",
      "2026-01-01T00:00:60Z",
      "2026-01-01T00:00:00.Z",
      "2026-01-01T00:00:00.1234567890Z",
      "yesterday",
      5,
      null,
    ]) {
      expect(timestampJsonMs(bad), String(bad)).toBeUndefined();
      expect(() => fromJson(TimestampSchema, bad as string)).toThrow();
    }
  });
});
