import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BlobPart, type Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { bytes, image, KB, message, readAll, sha } from "../../test/support/blob-fixtures.js";
import { user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { withMembers } from "../../test/support/with-members.js";
import type { BlobStorage } from "../storage/blobs.js";
import type { SessionKey, StorageEngine } from "../storage/engine.js";
import { JsonlEngine } from "../storage/jsonl/index.js";
import { sessionPath } from "../storage/jsonl/paths.js";
import { BlobStore } from "./blobs.js";
import { DEFAULT_LIMITS } from "./limits.js";
import { SessionStore } from "./session-store.js";

/**
 * The blob collector (BlobStore.collect): where the grace ends, what counts
 * as a use of a blob (uploading it again, a reference appended while a run
 * goes on; not a read), the blobs an append of this process holds,
 * unfinished uploads, a session it cannot read (nothing removed) or that
 * went meanwhile, and which calls share one run. On every engine; on
 * JSONL, damaged session files: one that could hide a reference stops the
 * run, one whose bytes cannot hold any does not.
 *
 * Date is faked and only moved by the test. A run's grace is set from the
 * times the engine itself reports (PostgreSQL stamps with its own clock),
 * so that the run's cut falls exactly where the test wants it.
 */

const WS = "default";

/** When the engine last saw a use of the blob (or of its unfinished upload). */
async function touchedAt(
  engine: StorageEngine,
  sha256: string,
  upload = false,
  workspace = WS,
): Promise<number> {
  const all = await engine.blobs.list(workspace);
  const b = all.find((x) => x.sha256 === sha256 && x.upload === upload);
  if (b === undefined) throw new Error(`no ${upload ? "upload" : "blob"} ${sha256}`);
  return b.touchedMs;
}

/** Moves the clock 1 s past `ms`, never back: a use from now on comes after `ms`. */
function clockPast(ms: number): void {
  vi.setSystemTime(Math.max(Date.now(), Math.ceil(ms) + 1000));
}

/** A run whose grace ends at `cut`: what was last touched before it is old, at or after it is not. */
function collectAt(blobs: BlobStore, cut: number) {
  clockPast(cut);
  return blobs.collect(WS, Date.now() - cut);
}

/** A caller's reference to an image blob. */
function imageRef(sha256: string, size: number) {
  return {
    case: "blob" as const,
    value: { sha256, size: BigInt(size), part: BlobPart.IMAGE, mediaType: "image/png" },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

describe.each(STORE_ENGINE_FACTORIES)("blob collection on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine);
    await store.create({ sessionId: "s1" });
  });
  afterEach(() => fixture.dispose());

  /** A blob no entry references, stored whole (one chunk); its name. */
  async function orphan(data: Uint8Array, workspace = WS): Promise<string> {
    await store.blobs.put(workspace, sha(data), data.length, 0, data);
    return sha(data);
  }

  /** The engine with session `sessionId` unreadable (an I/O error, not NOT_FOUND). */
  function unreadable(sessionId: string): StorageEngine {
    const engine = fixture.engine;
    const check = (key: SessionKey) => {
      if (key.sessionId === sessionId) throw new Error("disk on fire");
    };
    const scan = engine.scanEntries?.bind(engine);
    return withMembers(engine, {
      load: async (key) => {
        check(key);
        return engine.load(key);
      },
      ...(scan !== undefined && {
        scanEntries: async (key, s) => {
          check(key);
          return scan(key, s);
        },
      }),
    });
  }

  it("reads no session while no blob is past its grace: one untouched for exactly the grace is not", async () => {
    const x = await orphan(bytes(100 * KB, 1));
    const collector = new BlobStore(unreadable("s1"), DEFAULT_LIMITS);
    const t = await touchedAt(fixture.engine, x);
    expect(await collectAt(collector, t)).toEqual({ removed: 0, removedBytes: 0, kept: 1 });
    expect(await collectAt(collector, t + 0.01)).toEqual({
      removed: 0,
      removedBytes: 0,
      kept: 1,
      skipped: 'session "s1" could not be read (disk on fire)',
    });
  });

  it("removes nothing when a session cannot be read, and names it", async () => {
    const x = await orphan(bytes(100 * KB, 2));
    const partial = bytes(1000, 3);
    await store.blobs.put(WS, sha(partial), 1000, 0, partial.subarray(0, 500));
    const last = Math.max(
      await touchedAt(fixture.engine, x),
      await touchedAt(fixture.engine, sha(partial), true),
    );
    const collector = new BlobStore(unreadable("s1"), DEFAULT_LIMITS);
    expect(await collectAt(collector, last + 0.01)).toEqual({
      removed: 0,
      removedBytes: 0,
      kept: 2,
      skipped: 'session "s1" could not be read (disk on fire)',
    });
    expect(sha(await readAll(store.blobs, WS, x))).toBe(x);
    expect(await fixture.engine.blobs.uploaded(WS, sha(partial))).toBe(500);
  });

  it("passes over a session deleted while the run reads the sessions", async () => {
    const x = await orphan(bytes(100 * KB, 4));
    const engine = fixture.engine;
    const withGone = withMembers(engine, {
      listIds: async (ws) => [...(await engine.listIds(ws)), "gone"],
    });
    const collector = new BlobStore(withGone, DEFAULT_LIMITS);
    expect(await collectAt(collector, (await touchedAt(engine, x)) + 0.01)).toEqual({
      removed: 1,
      removedBytes: 100 * KB,
      kept: 0,
    });
  });

  it("removes an unfinished upload past its grace though entries reference its blob", async () => {
    const data = bytes(100 * KB, 5);
    await store.blobs.put(WS, sha(data), data.length, 0, data.subarray(0, 10 * KB));
    // Meanwhile the same content came as a part of an entry, and is a blob.
    await (await store.open(undefined, "s1")).append(message("m", [image(data)]));
    const last = Math.max(
      await touchedAt(fixture.engine, sha(data)),
      await touchedAt(fixture.engine, sha(data), true),
    );
    expect(await collectAt(store.blobs, last + 0.01)).toEqual({
      removed: 1,
      removedBytes: 10 * KB,
      kept: 1,
    });
    expect(await fixture.engine.blobs.uploaded(WS, sha(data))).toBe(0);
    expect(await readAll(store.blobs, WS, sha(data))).toEqual(data);
  });

  it("counts an upload of a stored blob as a use: a run within the new grace keeps it for the reference", async () => {
    const data = bytes(100 * KB, 6);
    const x = await orphan(data);
    const first = await touchedAt(fixture.engine, x);
    clockPast(first);
    // A client attaching the file again sends its first chunk: stored already.
    expect(await store.blobs.put(WS, x, data.length, 0, data.subarray(0, KB))).toEqual({
      received: data.length,
      stored: true,
    });
    expect(await collectAt(store.blobs, first + 0.01)).toEqual({
      removed: 0,
      removedBytes: 0,
      kept: 1,
    });
    const s = await store.open(undefined, "s1");
    await s.append(message("m", [imageRef(x, data.length)]));
    expect(await readAll(store.blobs, WS, x)).toEqual(data);
  });

  it("does not count a read as a use: an unreferenced blob read meanwhile goes", async () => {
    const data = bytes(100 * KB, 7);
    const x = await orphan(data);
    const first = await touchedAt(fixture.engine, x);
    clockPast(first);
    expect(await readAll(store.blobs, WS, x)).toEqual(data);
    expect(await collectAt(store.blobs, first + 0.01)).toEqual({
      removed: 1,
      removedBytes: data.length,
      kept: 0,
    });
  });

  it("keeps a blob that an append references between the run's judgement and its removal", async () => {
    const data = bytes(100 * KB, 8);
    const x = await orphan(data);
    const engine = fixture.engine;
    let judged!: () => void;
    const atRemoval = new Promise<void>((r) => {
      judged = r;
    });
    let resume!: () => void;
    const resumed = new Promise<void>((r) => {
      resume = r;
    });
    const remove: BlobStorage["delete"] = async (...args) => {
      judged();
      await resumed;
      return engine.blobs.delete(...args);
    };
    // The collector of another process: the append's hold is not seen there.
    const collector = new BlobStore(
      withMembers(engine, { blobs: withMembers(engine.blobs, { delete: remove }) }),
      DEFAULT_LIMITS,
    );
    const run = collectAt(collector, (await touchedAt(engine, x)) + 0.01);
    await atRemoval;
    const s = await store.open(undefined, "s1");
    await s.append(message("m", [imageRef(x, data.length)]));
    resume();
    expect(await run).toEqual({ removed: 0, removedBytes: 0, kept: 1 });
    expect(await readAll(store.blobs, WS, x)).toEqual(data);
  });

  it("keeps a blob an append of this process holds until the append settles", async () => {
    const blobs = new BlobStore(fixture.engine, DEFAULT_LIMITS);
    const data = bytes(100 * KB, 9);
    const during = await blobs.withBlobs(WS, [message("m", [image(data)])], async () =>
      collectAt(blobs, (await touchedAt(fixture.engine, sha(data))) + 0.01),
    );
    expect(during).toEqual({ removed: 0, removedBytes: 0, kept: 1 });
    const after = await collectAt(blobs, (await touchedAt(fixture.engine, sha(data))) + 0.01);
    expect(after).toEqual({ removed: 1, removedBytes: data.length, kept: 0 });
  });

  it("keeps a blob two appends hold until the last of them settles", async () => {
    const blobs = new BlobStore(fixture.engine, DEFAULT_LIMITS);
    const data = bytes(100 * KB, 10);
    const during = await blobs.withBlobs(WS, [message("a", [image(data)])], async () => {
      // A second append names the same blob, and is done first.
      await blobs.withBlobs(WS, [message("b", [imageRef(sha(data), data.length)])], async () => 0);
      return collectAt(blobs, (await touchedAt(fixture.engine, sha(data))) + 0.01);
    });
    expect(during).toEqual({ removed: 0, removedBytes: 0, kept: 1 });
  });

  it("makes one run of the calls for a workspace and grace made before it starts", async () => {
    const data = bytes(100 * KB, 11);
    const x = await orphan(data);
    const cut = (await touchedAt(fixture.engine, x)) + 0.01;
    clockPast(cut);
    const grace = Date.now() - cut;
    const [a, b] = await Promise.all([
      store.blobs.collect(WS, grace),
      store.blobs.collect(WS, grace),
    ]);
    expect(a).toEqual({ removed: 1, removedBytes: data.length, kept: 0 });
    expect(b).toEqual(a);
  });

  it("makes calls for another workspace or another grace runs of their own", async () => {
    await store.create({ workspace: "other", sessionId: "s1" });
    const x = await orphan(bytes(100 * KB, 12));
    const y = await orphan(bytes(200 * KB, 13), "other");
    const touched = Math.max(
      await touchedAt(fixture.engine, x),
      await touchedAt(fixture.engine, y, false, "other"),
    );
    clockPast(touched);
    const grace = Date.now() - (touched + 0.01);
    const [here, there] = await Promise.all([
      store.blobs.collect(WS, grace),
      store.blobs.collect("other", grace),
    ]);
    expect(here).toEqual({ removed: 1, removedBytes: 100 * KB, kept: 0 });
    expect(there).toEqual({ removed: 1, removedBytes: 200 * KB, kept: 0 });

    const z = await orphan(bytes(100 * KB, 14));
    const cut = (await touchedAt(fixture.engine, z)) + 0.01;
    clockPast(cut);
    const [long, short] = await Promise.all([
      store.blobs.collect(WS, DEFAULT_LIMITS.blobGraceMs),
      store.blobs.collect(WS, Date.now() - cut),
    ]);
    expect(long).toEqual({ removed: 0, removedBytes: 0, kept: 1 });
    expect(short).toEqual({ removed: 1, removedBytes: 100 * KB, kept: 0 });
  });
});

describe("blob collection and a damaged JSONL session", () => {
  let dir: string;
  let engine: JsonlEngine;
  let store: SessionStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sessiond-blob-gc-"));
    engine = new JsonlEngine({ dataDir: dir });
    store = new SessionStore(engine);
  });
  afterEach(async () => {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Session `bad` of these entries, then damaged mid-file (the store reopened on it). */
  async function damaged(entries: Entry[]): Promise<void> {
    await store.create({ sessionId: "bad" });
    await (await store.open(undefined, "bad")).append(entries);
    await engine.close();
    // A garbage line, then a valid record (a copy of the last one).
    const file = sessionPath(dir, WS, "bad", false);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    writeFileSync(file, `${lines.slice(0, -1).join("\n")}\n{"garbage":\n`);
    appendFileSync(file, `${lines.at(-1)}\n`);
    engine = new JsonlEngine({ dataDir: dir });
    store = new SessionStore(engine);
  }

  /** A blob no entry references; its size. */
  async function orphan(seed: number): Promise<number> {
    const data = bytes(100 * KB, seed);
    await store.blobs.put(WS, sha(data), data.length, 0, data);
    return data.length;
  }

  async function lastTouched(): Promise<number> {
    return Math.max(...(await engine.blobs.list(WS)).map((b) => b.touchedMs));
  }

  it("removes nothing while a session file with references is damaged, and names the session", async () => {
    await orphan(15);
    await damaged([
      message("m1", [image(bytes(100 * KB, 16))]),
      message("m2", [{ case: "text", value: "after" }]),
    ]);
    expect(await collectAt(store.blobs, (await lastTouched()) + 0.01)).toEqual({
      removed: 0,
      removedBytes: 0,
      kept: 2,
      skipped: 'session "bad" is damaged',
    });
  });

  it("goes on past a damaged session file in which no reference could hide", async () => {
    const size = await orphan(17);
    // Not a byte of the file spells "blob" (with its quotes): no entry of it can name one.
    await damaged([user("u1", "no attachments here"), user("u2", "nor here")]);
    expect(await collectAt(store.blobs, (await lastTouched()) + 0.01)).toEqual({
      removed: 1,
      removedBytes: size,
      kept: 0,
    });
  });
});
