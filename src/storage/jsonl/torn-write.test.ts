import { readFile, writeFile } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { create, toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  appendOf,
  assistant,
  expectCode,
  label,
  rootEntry,
  user,
} from "../../../test/support/fixtures.js";
import {
  brokenFiles,
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  scanFile,
  seedSession,
  tempDir,
  WS,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { planAppend } from "../../core/append-plan.js";
import { SessionLog } from "../../core/session-log.js";
import { checkFile } from "./fsck-scan.js";
import { rootOfFirstLine } from "./indexed-root.js";
import { scan } from "./reader.js";
import { checkFrame, encodeRecord, encodeRecords } from "./record.js";

/**
 * A batch (one Append; or a group commit's requests) is ONE write of
 * several lines, and it is all or nothing, also across a crash (SPEC §3).
 * A crash in the middle of that write leaves its first lines whole and the
 * rest missing or torn: every record of the write but its last carries the
 * `more` marker, so those whole lines are read as part of the torn tail,
 * never as applied entries.
 */

const k = keyOf("tornwrite");
const SEEDED = 3;
const MORE = '"more":true,';

function lines(buf: Buffer): string[] {
  return buf.toString("utf8").split("\n").slice(0, -1);
}

describe("torn write (a batch is all or nothing in the file)", () => {
  let dataDir: string;
  let file: string;
  let original: Buffer;

  beforeEach(async () => {
    dataDir = await tempDir();
    file = fileOf(dataDir, k);
    await withEngine(dataDir, (e) => seedSession(e, k, SEEDED));
    original = await readFile(file);
  });
  afterEach(() => removeDir(dataDir));

  const batch = () => [user("b1"), assistant("b2"), user("b3")];

  /** The bytes the writer writes for `entries` appended to the seeded session: one write. */
  async function writeOf(entries: Entry[]): Promise<Buffer> {
    return withEngine(dataDir, async (e) => {
      const plan = planAppend(await e.load(k), { entries });
      return encodeRecords(plan.write, plan.json);
    });
  }

  it("a retried batch whose write was torn after its first records completes instead of ALREADY_EXISTS", async () => {
    const bytes = await writeOf(batch());
    const written = lines(bytes);
    expect(written).toHaveLength(3);
    expect(written.map((l) => l.includes(MORE))).toEqual([true, true, false]);
    for (let cut = 0; cut < bytes.length; cut++) {
      await writeFile(file, Buffer.concat([original, bytes.subarray(0, cut)]));
      await withEngine(dataDir, async (e) => {
        const log = await e.load(k);
        expect(log.headSeq, `cut at ${cut}`).toBe(SEEDED);
        for (const b of batch()) expect(log.has(b.id), `cut at ${cut}: ${b.id}`).toBe(false);
        // The client's retry of the identical batch (its outcome was unknown).
        const result = await e.append(k, appendOf(batch()));
        expect(result.headSeq).toBe(SEEDED + 3);
      });
      const scanned = await scanFile(file);
      expect(scanned.verdict, `cut at ${cut}`).toEqual({ kind: "ok" });
      const entries = scanned.log.entries();
      expect(entries.map((x) => Number(x.seq))).toEqual([1, 2, 3, 4, 5, 6]);
      expect(entries.slice(SEEDED).map((x) => x.id)).toEqual(["b1", "b2", "b3"]);
      expect((await readFile(file)).subarray(0, original.length)).toEqual(original);
    }
    // Every cut but the empty one left bytes to save aside.
    expect(await brokenFiles(file)).not.toHaveLength(0);
  }, 60_000);

  it("the whole records of a write cut at the end of the file are a torn tail", async () => {
    const bytes = await writeOf(batch());
    const starts = lineStarts(bytes);
    for (const cut of [starts[1] as number, starts[2] as number, (starts[2] as number) + 9]) {
      const damaged = Buffer.concat([original, bytes.subarray(0, cut)]);
      const log = new SessionLog(k.sessionId);
      const r = scan(damaged, 0, log);
      expect(r.verdict).toMatchObject({ kind: "torn", line: SEEDED + 1, offset: original.length });
      expect(r.verdict.kind === "torn" && r.verdict.reason).toContain("incomplete write");
      expect(r.end).toBe(original.length);
      expect(log.headSeq).toBe(SEEDED);
      expect(log.last?.id).toBe(`m${SEEDED}`);
      expect(log.leafId).toBe(`m${SEEDED}`);

      await writeFile(file, damaged);
      const report = await checkFile({
        path: file,
        name: "x",
        workspace: WS,
        sessionId: k.sessionId,
        subagent: false,
      });
      expect(report).toMatchObject({
        status: "torn_tail",
        entries: SEEDED,
        line: SEEDED + 1,
        offset: original.length,
        tornBytes: cut,
      });
      await withEngine(dataDir, async (e) => {
        expect((await e.read(k, 0, 100)).entries).toHaveLength(SEEDED);
        expect(await readFile(file), "readers never truncate").toEqual(damaged);
      });
    }
  });

  it("an incomplete write followed by an intact record is mid-file corruption naming the line", async () => {
    const bytes = await writeOf(batch());
    const starts = lineStarts(bytes);
    // Line 4 whole, line 5 torn, then a record glued on by a writer that did not repair.
    const glued = Buffer.from(encodeRecord(user("late", "late", { parentId: "m3", seq: 5 })));
    const damaged = Buffer.concat([
      original,
      bytes.subarray(0, (starts[1] as number) + 20),
      Buffer.from("\n"),
      glued,
    ]);
    const log = new SessionLog(k.sessionId);
    const r = scan(damaged, 0, log);
    expect(r.verdict).toMatchObject({ kind: "corrupt", line: SEEDED + 2 });
    await writeFile(file, damaged);
    const err = await withEngine(dataDir, (e) => expectCode(e.load(k), "DATA_LOSS"));
    expect(err.message).toContain(`line ${SEEDED + 2}`);
    expect(await readFile(file)).toEqual(damaged);
  });

  it("the marker is covered by the CRC: dropped or added, the line is not intact", async () => {
    const [first, , last] = lines(await writeOf(batch())) as [string, string, string];
    const dropped = Buffer.from(first.replace(MORE, ""));
    expect(typeof checkFrame(dropped, 0, dropped.length)).toBe("string");
    const added = Buffer.from(last.replace('"entry":', `${MORE}"entry":`));
    expect(typeof checkFrame(added, 0, added.length)).toBe("string");
    // A write cut after its first record whose marker was dropped is still not read.
    const damaged = Buffer.concat([original, dropped, Buffer.from("\n")]);
    const log = new SessionLog(k.sessionId);
    expect(scan(damaged, 0, log).verdict.kind).toBe("torn");
    expect(log.headSeq).toBe(SEEDED);
  });

  it("a file written before the marker existed reads as before: each line is its own write", async () => {
    const plan = await withEngine(dataDir, async (e) =>
      planAppend(await e.load(k), { entries: batch() }),
    );
    const old = Buffer.from(plan.write.map((e) => encodeRecord(e)).join(""));
    expect(old.includes(MORE)).toBe(false);
    const starts = lineStarts(old);
    for (let kept = 0; kept < 3; kept++) {
      const damaged = Buffer.concat([original, old.subarray(0, (starts[kept] as number) + 5)]);
      const log = new SessionLog(k.sessionId);
      const r = scan(damaged, 0, log);
      expect(r.verdict).toMatchObject({ kind: "torn", line: SEEDED + kept + 1 });
      expect(log.headSeq).toBe(SEEDED + kept);
    }
    const log = new SessionLog(k.sessionId);
    expect(scan(Buffer.concat([original, old]), 0, log).verdict).toEqual({ kind: "ok" });
    expect(log.headSeq).toBe(SEEDED + 3);
  });

  it("catch-up: a write another process has not finished is not there yet, then is whole", async () => {
    const bytes = await writeOf(batch());
    const starts = lineStarts(bytes);
    await withEngine(dataDir, async (e) => {
      expect((await e.load(k)).headSeq).toBe(SEEDED);
      // Another process's write, seen in the middle: two whole lines of three.
      await writeFile(file, Buffer.concat([original, bytes.subarray(0, starts[2] as number)]));
      const during = await e.load(k);
      expect(during.headSeq).toBe(SEEDED);
      expect(during.has("b1")).toBe(false);
      expect((await e.read(k, 0, 100)).entries).toHaveLength(SEEDED);
      // The write completes.
      await writeFile(file, Buffer.concat([original, bytes]));
      const after = await e.load(k);
      expect(after.headSeq).toBe(SEEDED + 3);
      expect(after.slice(SEEDED).map((x) => x.id)).toEqual(["b1", "b2", "b3"]);
      expect(after.leafId).toBe("b3");
    });
    expect(await brokenFiles(file)).toEqual([]);
  });

  it("group commit: the requests written together are one write, cut together", async () => {
    await withEngine(dataDir, async (e) => {
      await e.load(k);
      await Promise.all(
        [0, 1, 2, 3].map((i) =>
          e.append(k, appendOf([user(`g${i}a`, "a", { parentId: "m3" }), user(`g${i}b`)])),
        ),
      );
    });
    const full = await readFile(file);
    const written = lines(full.subarray(original.length));
    expect(written).toHaveLength(8);
    // However the requests were grouped, only the last record of each write lacks the marker.
    const ends = written.filter((l) => !l.includes(MORE)).length;
    expect(ends).toBeGreaterThanOrEqual(1);
    expect(written.at(-1)?.includes(MORE)).toBe(false);
    if (ends === 1) {
      await writeFile(file, full.subarray(0, full.length - 10));
      const scanned = await scanFile(file);
      expect(scanned.verdict.kind).toBe("torn");
      expect(scanned.log.headSeq).toBe(SEEDED);
    }
  });

  it("a create is written without markers; a first line with one still gives the root", async () => {
    const k2 = keyOf("forked");
    const root = rootEntry(k2.sessionId);
    const entries = [root, user("f2", "x", { parentId: root.id, seq: 2 })];
    entries.push(user("f3", "y", { parentId: "f2", seq: 3 }));
    await withEngine(dataDir, (e) => e.create(k2, entries));
    const created = await readFile(fileOf(dataDir, k2));
    expect(created.includes(MORE)).toBe(false);
    expect(created).toEqual(Buffer.from(entries.map((e) => encodeRecord(e)).join("")));
    // The same entries written as one write by other means: the first line is marked.
    const buf = encodeRecords(entries);
    expect(lines(buf)[0]).toContain(MORE);
    const indexed = rootOfFirstLine(WS, k2.sessionId, buf, buf.length, buf.indexOf(0x0a));
    expect(indexed.health).toBe("ok");
    expect(indexed.root?.id).toBe(root.id);
    await writeFile(fileOf(dataDir, k2), buf);
    await withEngine(dataDir, async (e) => {
      expect((await e.load(k2)).headSeq).toBe(3);
    });
  });
});

describe("the last whole record before a cut write", () => {
  const sid = "lastdecoded";
  const root = rootEntry(sid, { id: "root" });
  const payload = (id: string, parentId: string, seq: number) =>
    toJsonString(EntrySchema, user(id, `text of ${id}`, { parentId, seq }));
  const lineOf = (seq: number, json: string, more = false) => {
    const crc = crc32(json, crc32(more ? `${seq}+` : String(seq)))
      .toString(16)
      .padStart(8, "0");
    return `{"seq":${seq},"crc":"${crc}",${more ? MORE : ""}"entry":${json}}\n`;
  };

  it("is decoded at load like any last valid record: a bad one is corrupt, a good one is `last`", () => {
    const m3 = JSON.parse(payload("m3", "m2", 3)) as Record<string, unknown>;
    const cutWrite = lineOf(4, payload("w4", "m3", 4), true);
    for (const [third, want] of [
      [JSON.stringify(m3), "torn"],
      [JSON.stringify({ ...m3, timestamp: "not a time" }), "corrupt"],
    ] as const) {
      const buf = Buffer.from(
        [encodeRecord(root), lineOf(2, payload("m2", "root", 2)), lineOf(3, third), cutWrite].join(
          "",
        ),
      );
      const log = new SessionLog(sid);
      const r = scan(buf, 0, log);
      expect(r.verdict.kind).toBe(want);
      if (want === "corrupt") {
        expect(r.verdict).toMatchObject({ line: 3 });
        expect(log.headSeq).toBe(2);
      } else {
        expect(r.verdict).toMatchObject({ line: 4 });
        expect(log.headSeq).toBe(3);
        expect(log.last?.id).toBe("m3");
      }
    }
  });
});

describe("SessionLog.truncate (taking a cut write back out)", () => {
  it("leaves the log exactly as if the dropped entries had never been applied", () => {
    const sid = "trunc";
    const titled = (id: string, title: string, parentId: string, seq: number) =>
      create(EntrySchema, {
        id,
        parentId,
        seq: BigInt(seq),
        kind: { case: "sessionInfo", value: { sessionId: sid, title } },
      });
    const leaf = (id: string, target: string, parentId: string, seq: number) =>
      create(EntrySchema, {
        id,
        parentId,
        seq: BigInt(seq),
        kind: { case: "leaf", value: { leafId: target } },
      });
    const all: Entry[] = [
      rootEntry(sid, { title: "t1" }),
      user("m2", "a", { parentId: `root-${sid}`, seq: 2 }),
      label("l3", "x", { parentId: "m2", seq: 3 }),
      user("m4", "b", { parentId: "l3", seq: 4 }),
      label("l5", "x", { parentId: "m4", seq: 5 }),
      titled("s6", "t2", "l5", 6),
      label("l7", "y", { parentId: "s6", seq: 7 }),
      leaf("f8", "m2", "l7", 8),
      user("m9", "c", { parentId: "m2", seq: 9 }),
    ];
    for (let keep = 0; keep <= all.length; keep++) {
      const log = SessionLog.from(sid, all);
      log.truncate(keep);
      const want = SessionLog.from(sid, all.slice(0, keep));
      expect(log.headSeq).toBe(keep);
      expect(log.leafId, `keep ${keep}`).toBe(want.leafId);
      expect(log.messageCount).toBe(want.messageCount);
      expect(log.title, `keep ${keep}`).toBe(want.title);
      for (const l of ["x", "y"])
        expect(log.labelTarget(l), `keep ${keep}`).toBe(want.labelTarget(l));
      for (const e of all) expect(log.has(e.id)).toBe(want.has(e.id));
      // And it grows again from there.
      if (keep < all.length) {
        log.apply(all[keep] as Entry);
        expect(log.headSeq).toBe(keep + 1);
      }
    }
  });
});
