import { randomBytes } from "node:crypto";
import { copyFile, readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, rootEntry, ts, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  tempDir,
} from "../../../test/support/jsonl/fixtures.js";
import { sealedTestDirs } from "../../../test/support/jsonl/sealed-dirs.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionLog } from "../../core/session-log.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { SessionSealer } from "../seal/sealed-payload.js";
import { CheckpointOpener, checkpointPath, writeCheckpoint } from "./checkpoint.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { scan } from "./reader.js";
import { checkFrame, encodeFileContent, type IntactRecord } from "./record.js";

/**
 * The checkpoint of a sealed session (checkpoint.ts): a cold read opens
 * its entries from it instead of one by one, reads exactly what the log
 * says (also past it, after a redaction, after another engine appended),
 * never trusts a damaged, stale or moved one, and goes with an erasure
 * or a redaction.
 */

const WS = "vault";
const MARKER = "CKPT-MARKER-5d1e";
const ENTRIES = 40;

const dirs = sealedTestDirs();

afterEach(() => {
  vi.restoreAllMocks();
});

/** An engine sealing WS; `checkpointAfter` 1 (tests' sessions are small) unless told. */
function engine(checkpointAfter = 1, keys: LocalKeyring | null = dirs.keyring) {
  return new JsonlEngine({
    dataDir: dirs.dataDir,
    checkpointAfter,
    encryption: keys === null ? undefined : { keys, workspaces: [WS] },
  });
}

/** A sealed session of `n` messages (marker in every one), written and closed (checkpoint written). */
async function writeSession(sessionId: string, n = ENTRIES, text = MARKER) {
  const store = new SessionStore(engine());
  await store.create({ workspace: WS, sessionId });
  const s = await store.open(WS, sessionId);
  for (let i = 0; i < n; i += 2) {
    await s.append([
      user(`u${i}`, `${text} question ${i}`),
      assistant(`a${i}`, `${text} answer ${i}`),
    ]);
  }
  await store.close();
}

/** Per-entry opens of sealed payloads while `fn` runs. */
async function countOpens<T>(fn: () => Promise<T>): Promise<{ value: T; opens: number }> {
  const spy = vi.spyOn(SessionSealer.prototype, "open");
  try {
    const value = await fn();
    return { value, opens: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

/** Every entry of the session as a fresh engine reads it (JSON), and how many it opened one by one. */
async function coldRead(sessionId: string, checkpointAfter = 1) {
  const e = engine(checkpointAfter);
  try {
    return await countOpens(async () => {
      const page = await e.read(keyOf(sessionId, WS), 0, 10_000);
      return page.entries.map((x: Entry) => toJsonString(EntrySchema, x));
    });
  } finally {
    await e.close();
  }
}

/** The same, every entry opened from its record (no checkpoint on disk). */
async function entryByEntry(sessionId: string): Promise<string[]> {
  const file = checkpointPath(fileOf(dirs.dataDir, keyOf(sessionId, WS)));
  const saved = await readFile(file).catch(() => undefined);
  const { rm } = await import("node:fs/promises");
  await rm(file, { force: true });
  try {
    const { value, opens } = await coldRead(sessionId, Number.POSITIVE_INFINITY);
    expect(opens).toBe(value.length - 1); // every message, one by one (not the root)
    return value;
  } finally {
    if (saved !== undefined) await writeFile(file, saved);
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    if ((await stat(path.join(dir, name))).isFile()) out.push(name);
  }
  return out.sort();
}

describe("the checkpoint of a sealed session", () => {
  it("is written at close, and a cold read takes its entries from it: the same entries as opened one by one", async () => {
    await writeSession("s1");
    const file = fileOf(dirs.dataDir, keyOf("s1", WS));
    expect((await stat(checkpointPath(file))).size).toBeGreaterThan(0);
    // Sealed: no content in it in clear.
    expect((await readFile(checkpointPath(file))).includes(MARKER)).toBe(false);
    const cold = await coldRead("s1");
    expect(cold.value).toHaveLength(ENTRIES + 1);
    expect(cold.value.join("\n")).toContain(MARKER);
    // The first and last records are decoded (opened one by one) while the log is
    // scanned; every other one comes from the checkpoint.
    expect(cold.opens).toBeLessThanOrEqual(2);
    expect(cold.value).toEqual(await entryByEntry("s1"));
  });

  it("entries appended past it (by another engine) are opened from their records, the rest from it", async () => {
    await writeSession("s2");
    // Another engine (as another process would) appends, and writes no checkpoint.
    const other = new SessionStore(engine(Number.POSITIVE_INFINITY));
    const s = await (await other.open(WS, "s2")).append([
      user("late1", `${MARKER} late`),
      user("late2"),
    ]);
    expect(s.headSeq).toBe(ENTRIES + 3);
    await other.close();
    const cold = await coldRead("s2", Number.POSITIVE_INFINITY);
    expect(cold.value).toHaveLength(ENTRIES + 3);
    expect(cold.opens).toBeLessThanOrEqual(3);
    expect(cold.value).toEqual(await entryByEntry("s2"));
  });

  it("an engine that read it catches up with another engine's appends", async () => {
    await writeSession("s3");
    const reader = engine(Number.POSITIVE_INFINITY);
    const k = keyOf("s3", WS);
    expect((await reader.read(k, 0, 1000)).entries).toHaveLength(ENTRIES + 1);
    const writer = new SessionStore(engine(Number.POSITIVE_INFINITY));
    await (await writer.open(WS, "s3")).append([assistant("x1", "after the checkpoint")]);
    await writer.close();
    const again = await reader.read(k, 0, 1000);
    expect(again.entries.map((e) => e.id).slice(-2)).toEqual([`a${ENTRIES - 2}`, "x1"]);
    await reader.close();
  });

  it("a checkpoint older than a redaction is not trusted: the redacted entry reads redacted", async () => {
    await writeSession("s4");
    const file = fileOf(dirs.dataDir, keyOf("s4", WS));
    const stale = await readFile(checkpointPath(file));
    const store = new SessionStore(engine(Number.POSITIVE_INFINITY));
    await (await store.open(WS, "s4")).redact(["u2"], { by: "ops", why: "pasted a key" });
    // The redaction deleted it (a copy of the purged content under a key that still opens it).
    await expect(stat(checkpointPath(file))).rejects.toThrow(/ENOENT/);
    await store.close();
    // Put back (a crash, a restore from a backup): the rewritten record is not the one it holds.
    await writeFile(checkpointPath(file), stale);
    const cold = await coldRead("s4", Number.POSITIVE_INFINITY);
    const u2 = JSON.parse(cold.value[3] as string) as { id: string; withheld?: { why: string } };
    expect(u2.id).toBe("u2");
    expect(u2.withheld?.why).toBe("pasted a key");
    expect(cold.value[3]).not.toContain(`${MARKER} question 2`);
    expect(cold.opens).toBeLessThanOrEqual(3);
    expect(cold.value).toEqual(await entryByEntry("s4"));
  });

  it("after a redaction the next checkpoint holds the redacted form, and no copy of the purged text", async () => {
    await writeSession("s5", 4, "plain");
    const store = new SessionStore(engine());
    const s = await store.open(WS, "s5");
    await s.append([user("secret", `token ${MARKER}`)]);
    await s.redact(["secret"], { by: "ops", why: "pasted a key" });
    // Read again (the redaction dropped the log it had), then closed: a new checkpoint.
    expect((await s.entries()).entries).toHaveLength(6);
    await store.close();
    const file = fileOf(dirs.dataDir, keyOf("s5", WS));
    expect((await stat(checkpointPath(file))).size).toBeGreaterThan(0);
    const cold = await coldRead("s5", Number.POSITIVE_INFINITY);
    expect(cold.value.join("\n")).not.toContain(MARKER);
    expect(cold.opens).toBeLessThanOrEqual(2);
    // Opened with the data key, the checkpoint holds no trace of the purged text.
    const e = engine(Number.POSITIVE_INFINITY);
    const { value: plain } = await countOpens(async () => {
      const spy = vi.spyOn(SessionSealer.prototype, "openSegment");
      await e.read(keyOf("s5", WS), 0, 100);
      return spy.mock.results.map((r) => r.value as Buffer | undefined);
    });
    await e.close();
    expect(plain.length).toBeGreaterThan(0);
    for (const p of plain) {
      expect(p).toBeDefined();
      expect((p as Buffer).includes(MARKER)).toBe(false);
    }
  });

  it("a damaged checkpoint is not trusted: its segments that do not open are skipped", async () => {
    await writeSession("s6");
    const file = checkpointPath(fileOf(dirs.dataDir, keyOf("s6", WS)));
    const bytes = await readFile(file);
    bytes[bytes.length - 40] = (bytes[bytes.length - 40] as number) ^ 0x01;
    await writeFile(file, bytes);
    const cold = await coldRead("s6", Number.POSITIVE_INFINITY);
    expect(cold.value).toEqual(await entryByEntry("s6"));
    expect(cold.opens).toBe(ENTRIES); // the only segment does not open: all one by one
    // Cut short: the same.
    await writeFile(file, bytes.subarray(0, bytes.length - 100));
    expect((await coldRead("s6", Number.POSITIVE_INFINITY)).value).toEqual(
      await entryByEntry("s6"),
    );
  });

  it("a checkpoint moved from another session is not trusted, even over the same ids and seqs", async () => {
    await writeSession("s7", ENTRIES, "SEVEN");
    await writeSession("s8", ENTRIES, "EIGHT");
    const from = checkpointPath(fileOf(dirs.dataDir, keyOf("s7", WS)));
    const to = checkpointPath(fileOf(dirs.dataDir, keyOf("s8", WS)));
    await copyFile(from, to);
    const cold = await coldRead("s8", Number.POSITIVE_INFINITY);
    expect(cold.value.join("\n")).not.toContain("SEVEN");
    expect(cold.value.join("\n")).toContain("EIGHT");
    expect(cold.opens).toBe(ENTRIES);
  });

  it("a checkpoint of a deleted session does not serve the session made again under its id", async () => {
    await writeSession("s9", ENTRIES, "FIRST");
    const file = fileOf(dirs.dataDir, keyOf("s9", WS));
    const old = await readFile(checkpointPath(file));
    const e = engine();
    expect(await e.delete(keyOf("s9", WS))).toBe(true);
    await e.close();
    // Deleted with the session.
    await expect(stat(checkpointPath(file))).rejects.toThrow(/ENOENT/);
    await writeSession("s9", ENTRIES, "SECOND");
    await writeFile(checkpointPath(file), old);
    const cold = await coldRead("s9", Number.POSITIVE_INFINITY);
    expect(cold.value.join("\n")).not.toContain("FIRST");
    expect(cold.opens).toBe(ENTRIES);
  });

  it("an erasure deletes it: no file of the session holds content, none is left to open", async () => {
    await writeSession("s10");
    const file = fileOf(dirs.dataDir, keyOf("s10", WS));
    expect((await stat(checkpointPath(file))).size).toBeGreaterThan(0);
    const store = new SessionStore(engine());
    await store.erase({ workspace: WS, sessionIds: ["s10"], by: "dpo", why: "user asked" });
    await store.close();
    await expect(stat(checkpointPath(file))).rejects.toThrow(/ENOENT/);
    const names = await filesUnder(dirs.dataDir);
    expect(names.filter((n) => n.includes("ckpt"))).toEqual([]);
    for (const n of names) {
      expect((await readFile(path.join(dirs.dataDir, n))).includes(MARKER)).toBe(false);
    }
    // Closing an erased session writes none again.
    const again = engine();
    await again.read(keyOf("s10", WS), 0, 100);
    await again.close();
    await expect(stat(checkpointPath(file))).rejects.toThrow(/ENOENT/);
  });

  it("a store that is only read (need readable) writes none into its data dir", async () => {
    await writeSession("s12");
    const file = checkpointPath(fileOf(dirs.dataDir, keyOf("s12", WS)));
    const { rm } = await import("node:fs/promises");
    await rm(file);
    const reader = new JsonlEngine({
      dataDir: dirs.dataDir,
      need: "readable",
      checkpointAfter: 1,
      encryption: { keys: dirs.keyring, workspaces: [WS] },
    });
    expect((await reader.read(keyOf("s12", WS), 0, 100)).entries).toHaveLength(ENTRIES + 1);
    await reader.close();
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    // A writable one does, on the same read.
    const writer = engine();
    await writer.read(keyOf("s12", WS), 0, 100);
    await writer.close();
    expect((await stat(file)).size).toBeGreaterThan(0);
  });

  it("without the right key a session with a checkpoint fails clearly, as one without", async () => {
    await writeSession("s11");
    const k = keyOf("s11", WS);
    const noKeys = engine(1, null);
    const missing = await noKeys.read(k, 0, 100).then(
      () => undefined,
      (err: unknown) => err,
    );
    await noKeys.close();
    expect(isSessiondError(missing, "FAILED_PRECONDITION")).toBe(true);
    expect(String((missing as Error).message)).toMatch(/encrypted/);
    const otherDir = await tempDir("sessiond-keys-");
    try {
      const other = await LocalKeyring.open(path.join(otherDir, "keyring.json"), {
        create: true,
      });
      await other.rotate(WS);
      const wrong = engine(1, other);
      const err = await wrong.read(k, 0, 100).then(
        () => undefined,
        (e: unknown) => e,
      );
      await wrong.close();
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
      expect(String((err as Error).message)).toMatch(/does not unwrap|no version/);
    } finally {
      await removeDir(otherDir);
    }
  });
});

/**
 * A sealed log of a root and 5 messages (seqs 2-6) written with a known
 * data key, its checkpoint, and an opener of it, read. With `craft`, the
 * checkpoint is instead one segment of seqs 2-6 holding the bytes it
 * makes, sealed under the same key (as only a holder of the key could).
 */
async function smallCheckpoint(
  sessionId: string,
  craft?: (
    frame: (seq: number) => IntactRecord,
    buf: Buffer,
    text: (seq: number) => string,
  ) => Buffer,
) {
  const key = keyOf(sessionId, WS);
  const sealer = new SessionSealer(WS, sessionId, randomBytes(32));
  const entries = [rootEntry(sessionId)];
  for (let seq = 2; seq <= 6; seq++) {
    const parentId = entries[entries.length - 1]?.id;
    entries.push(user(`u${seq}`, `${MARKER} ${seq}`, { parentId, seq, timestamp: ts(seq) }));
  }
  const logFile = path.join(dirs.dataDir, `${sessionId}.jsonl`);
  const buf = encodeFileContent(entries, sealer);
  await writeFile(logFile, buf);
  const starts = lineStarts(buf);
  const frame = (seq: number) =>
    checkFrame(buf, starts[seq - 1] as number, (starts[seq] as number) - 1) as IntactRecord;
  if (craft === undefined) {
    expect((await writeCheckpoint(nodeFs, logFile, key, sealer)).covered).toBe(6);
  } else {
    const header = `${JSON.stringify({ format: "sessiond-checkpoint", version: 1, ...key })}\n`;
    const text = (seq: number) => toJsonString(EntrySchema, entries[seq - 1] as Entry);
    const sealed = sealer.sealSegment(2, 6, craft(frame, buf, text));
    const range = Buffer.alloc(12);
    range.writeUInt32BE(2, 0);
    range.writeUInt32BE(6, 4);
    range.writeUInt32BE(sealed.length, 8);
    await writeFile(checkpointPath(logFile), Buffer.concat([Buffer.from(header), range, sealed]));
  }
  const opener = new CheckpointOpener(sealer, nodeFs, checkpointPath(logFile), key);
  await opener.ready;
  const textOf = (b: Buffer, seq: number, f = frame(seq)) => opener.textOf(b, seq, f.start, f.end);
  const expected = (seq: number) => toJsonString(EntrySchema, entries[seq - 1] as Entry);
  /** A copy of `buf` with a byte of the GCM tag of `seq`'s record flipped. */
  const altered = (seq: number) => {
    const copy = Buffer.from(buf);
    const at = frame(seq).end - 5;
    copy[at] = (copy[at] as number) === 0x41 ? 0x42 : 0x41;
    return copy;
  };
  return { buf, opener, frame, textOf, expected, altered };
}

/** A checkpoint entry for the record of `seq` in `log` (as the writer makes it), holding `text`. */
function entryFor(frame: (seq: number) => IntactRecord, log: Buffer, seq: number, text: string) {
  const f = frame(seq);
  const sealedAt = log.indexOf('{"@sealed":"', f.start) + 12;
  const bytes = Buffer.from(text);
  const entry = Buffer.alloc(64 + bytes.length);
  entry.writeUInt32BE(seq, 0);
  entry.writeUInt32BE(Number.parseInt(log.toString("latin1", f.start - 18, f.start - 10), 16), 4);
  entry.writeUInt32BE(f.end - 3 - sealedAt, 8);
  entry.writeUInt32BE(sealedAt - 12 - f.start, 12);
  entry.writeUInt32BE(bytes.length, 16);
  log.copy(entry, 20, sealedAt, sealedAt + 20);
  log.copy(entry, 40, f.end - 3 - 24, f.end - 3);
  bytes.copy(entry, 64);
  return entry;
}

/** Counts the checkpoint's comparisons of a record with its entry (its private `find`). */
function spyFind() {
  return vi.spyOn(
    CheckpointOpener.prototype as unknown as { find: (...a: unknown[]) => unknown },
    "find",
  );
}

describe("a checkpoint's entries matched while the log is scanned", () => {
  it("a cold read compares each record with the checkpoint once, while it scans the log", async () => {
    await writeSession("m1");
    const events: string[] = [];
    const proto = CheckpointOpener.prototype as unknown as {
      find: (...a: unknown[]) => unknown;
      textOf: (...a: unknown[]) => unknown;
    };
    const { find, textOf } = proto;
    vi.spyOn(proto, "find").mockImplementation(function (this: unknown, ...a) {
      events.push("compare");
      return find.apply(this, a);
    });
    vi.spyOn(proto, "textOf").mockImplementation(function (this: unknown, ...a) {
      events.push("take");
      return textOf.apply(this, a);
    });
    const cold = await coldRead("m1", Number.POSITIVE_INFINITY);
    const seen = events.splice(0);
    vi.restoreAllMocks();
    expect(cold.value).toEqual(await entryByEntry("m1"));
    expect(cold.opens).toBeLessThanOrEqual(2);
    // Every message but the last (decoded as the scan ends) is compared once,
    // all of them before the first is taken.
    expect(seen.filter((e) => e === "compare")).toHaveLength(ENTRIES - 1);
    expect(seen.filter((e) => e === "take")).toHaveLength(ENTRIES - 1);
    expect(seen.lastIndexOf("compare")).toBeLessThan(seen.indexOf("take"));
  });

  it("a read waits for its checkpoint before it scans the log, however late it comes", async () => {
    await writeSession("m3");
    const proto = CheckpointOpener.prototype as unknown as {
      load: () => Promise<void>;
      match: (...a: unknown[]) => void;
    };
    const { load } = proto;
    let loaded = false;
    vi.spyOn(proto, "load").mockImplementation(async function (this: unknown) {
      await new Promise((r) => setTimeout(r, 50));
      await load.apply(this);
      loaded = true;
    });
    const matchedAfterLoad: boolean[] = [];
    const { match } = proto;
    vi.spyOn(proto, "match").mockImplementation(function (this: unknown, ...a) {
      matchedAfterLoad.push(loaded);
      match.apply(this, a);
    });
    const cold = await coldRead("m3", Number.POSITIVE_INFINITY);
    vi.restoreAllMocks();
    expect(cold.opens).toBeLessThanOrEqual(2);
    expect(matchedAfterLoad).toHaveLength(ENTRIES - 1);
    expect(matchedAfterLoad.every((x) => x)).toBe(true);
    expect(cold.value).toEqual(await entryByEntry("m3"));
  });

  it("only the very buffer and bounds matched are taken without a comparison", async () => {
    const { buf, opener, frame, textOf, expected, altered } = await smallCheckpoint("m2");
    const find = spyFind();

    opener.match(buf, 3, frame(3).start, frame(3).end);
    // Matched, but asked of other bounds or another buffer: compared (and not the same record).
    expect(textOf(buf, 3, frame(4))).toBeUndefined();
    expect(textOf(buf, 3, { ...frame(3), start: frame(3).start + 1 })).toBeUndefined();
    expect(textOf(buf, 3, { ...frame(3), end: frame(3).end - 1 })).toBeUndefined();
    expect(textOf(altered(3), 3)).toBeUndefined();
    find.mockClear();
    // Asked of the very record matched: taken without comparing again, once.
    expect(textOf(buf, 3)).toBe(expected(3));
    expect(find).not.toHaveBeenCalled();
    expect(textOf(buf, 3)).toBeUndefined();

    // A record that does not match is not taken for it, nor for the record matched before it.
    const bad = altered(5);
    opener.match(bad, 5, frame(5).start, frame(5).end);
    expect(textOf(bad, 5)).toBeUndefined();
    find.mockClear();
    expect(textOf(buf, 5)).toBe(expected(5));
    expect(find).toHaveBeenCalledTimes(1);
  });
});

describe("a checkpoint's entry that does not describe its record", () => {
  it("whose clear part would run past its text is not taken, and matching it does not throw", async () => {
    // The entry of seq 3 as the writer makes it, but its clear part said 10
    // bytes longer (and the base64 10 shorter: the record's length agrees)
    // than its text of 2 bytes; the last entry of its segment.
    const { buf, opener, frame, textOf } = await smallCheckpoint("w1", (frameOf, log) => {
      const entry = entryFor(frameOf, log, 3, "{}");
      entry.writeUInt32BE(entry.readUInt32BE(8) - 10, 8);
      entry.writeUInt32BE(entry.readUInt32BE(12) + 10, 12);
      return entry;
    });
    expect(() => opener.match(buf, 3, frame(3).start, frame(3).end)).not.toThrow();
    expect(textOf(buf, 3)).toBeUndefined();
  });
});

describe("an entry read from the checkpoint", () => {
  it("is the record's only when it decodes to the record's seq; fields it does not know are ignored", async () => {
    // Seq 3's text says seq 4 too (its last "seq" wins in JSON); seq 4's has a
    // field this reader does not know (a newer writer's); the rest are as written.
    const { buf, opener, expected } = await smallCheckpoint("d1", (frame, log, text) =>
      Buffer.concat(
        [2, 3, 4, 5, 6].map((seq) => {
          const t = text(seq);
          if (seq === 3) return entryFor(frame, log, seq, `${t.slice(0, -1)},"seq":"4"}`);
          if (seq === 4) return entryFor(frame, log, seq, `${t.slice(0, -1)},"zzFuture":1}`);
          return entryFor(frame, log, seq, t);
        }),
      ),
    );
    const opens = vi.spyOn(SessionSealer.prototype, "open");
    const log = new SessionLog("d1");
    expect(scan(buf, 0, log, undefined, opener).verdict.kind).toBe("ok");
    const json = (seq: number) => toJsonString(EntrySchema, log.at(seq) as Entry);
    for (const seq of [2, 3, 4, 5, 6]) expect(json(seq)).toBe(expected(seq));
    // Opened one by one: the last record (decoded as the scan ends) and seq 3.
    expect(opens.mock.calls.map((c) => c[1])).toEqual([6, 3]);
  });
});
