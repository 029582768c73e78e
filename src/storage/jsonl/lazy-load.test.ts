import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import { create, toBinary, toJson, toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { forkLikeEntries, rootEntry, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionLog } from "../../core/session-log.js";
import { ensureDir } from "./create-file.js";
import { metaOfJson, newMeta, scanMeta } from "./entry-meta.js";
import { nodeFs } from "./fs-ops.js";
import { scan } from "./reader.js";
import { checkFrame, decodePayload, encodeRecord } from "./record.js";

/**
 * Loading is lazy: the reader indexes id, parent, seq and kind of each
 * record and decodes the full entry on first use (README.md, "Reading and
 * damage"). These tests pin down that lazily decoded entries are the
 * stored ones, and that a record with a valid checksum that is not a valid
 * entry is DATA_LOSS naming its line: at load when the indexed fields are
 * wrong, at first use otherwise, and from then on for every load.
 */

/** Every kind (a fork-like session has all but Leaf), then a Leaf and an entry without kind. */
function allKinds(): Entry[] {
  const entries = forkLikeEntries("20260101-000000-cafebabe");
  const n = entries.length;
  const last = entries[n - 1] as Entry;
  entries.push(
    create(EntrySchema, {
      id: "v-leaf",
      parentId: last.id,
      seq: BigInt(n + 1),
      kind: { case: "leaf", value: { leafId: "c09" } },
    }),
    create(EntrySchema, { id: "no-kind", parentId: "c09", seq: BigInt(n + 2) }),
    user("tail", "the last line is decoded at load", { parentId: "no-kind", seq: n + 3 }),
  );
  return entries;
}

/** A record line with a valid checksum around any payload text. */
function lineOf(seq: number, payload: string): string {
  const crc = crc32(payload, crc32(String(seq)))
    .toString(16)
    .padStart(8, "0");
  return `{"seq":${seq},"crc":"${crc}","entry":${payload}}\n`;
}

describe("lazy entries", () => {
  it("materialise toBinary-equal to eagerly decoded ones, for every kind", () => {
    const entries = allKinds();
    const buf = Buffer.from(entries.map((e) => encodeRecord(e)).join(""));
    const log = new SessionLog("20260101-000000-cafebabe");
    expect(scan(buf, 0, log).verdict.kind).toBe("ok");
    expect(log.headSeq).toBe(entries.length);
    let pos = 0;
    for (const e of entries) {
      const nl = buf.indexOf(0x0a, pos);
      const frame = checkFrame(buf, pos, nl);
      if (typeof frame === "string") throw new Error(frame);
      const eager = decodePayload(buf, frame);
      if (typeof eager === "string") throw new Error(eager);
      const lazy = log.at(Number(e.seq)) as Entry;
      expect(toBinary(EntrySchema, lazy)).toEqual(toBinary(EntrySchema, eager));
      expect(toBinary(EntrySchema, lazy)).toEqual(toBinary(EntrySchema, e));
      expect(log.get(e.id)).toBe(lazy);
      pos = nl + 1;
    }
    expect(log.leafId).toBe("tail");
    expect(log.title).toBe("renamed fork");
    expect(log.labelTarget("after-refactor")).toBe("c17");
  });

  it("the fast scan of a payload agrees with reading it after JSON.parse", () => {
    let fast = 0;
    for (const e of allKinds()) {
      const payload = toJsonString(EntrySchema, e);
      const buf = Buffer.from(`xx${payload}yy`);
      const viaJson = newMeta();
      expect(metaOfJson(JSON.parse(payload), viaJson)).toBeUndefined();
      expect(viaJson).toMatchObject({ id: e.id, parentId: e.parentId, kind: e.kind.case });
      const scanned = newMeta();
      if (scanMeta(buf, 2, buf.length - 2, scanned)) {
        fast++;
        expect(scanned).toEqual(viaJson);
      }
    }
    expect(fast).toBeGreaterThan(15);
  });
});

describe("a record with a valid checksum that is not a valid entry", () => {
  let dataDir: string;
  const k = keyOf("20260101-000000-0badc0de");
  const root = rootEntry(k.sessionId, { id: "root" });
  const msg = (id: string, parentId: string, seq: number) =>
    toJsonString(EntrySchema, user(id, `text of ${id}`, { parentId, seq }));

  beforeEach(async () => {
    dataDir = await tempDir();
    await ensureDir(nodeFs, path.dirname(fileOf(dataDir, k)), false);
  });
  afterEach(() => removeDir(dataDir));

  /** Writes root, m2, <bad> at line 3, m4, m5 (each a child of the previous). */
  async function writeWithLine3(bad: string) {
    const lines = [
      encodeRecord(root),
      lineOf(2, msg("m2", "root", 2)),
      lineOf(3, bad),
      lineOf(4, msg("m4", "m3", 4)),
      lineOf(5, msg("m5", "m4", 5)),
    ];
    await writeFile(fileOf(dataDir, k), lines.join(""));
  }

  async function expectDataLoss(p: Promise<unknown>, line: number) {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSessiondError(err, "DATA_LOSS"), `expected DATA_LOSS, got ${String(err)}`).toBe(true);
    expect((err as Error).message).toContain(`line ${line}`);
  }

  const m3 = JSON.parse(msg("m3", "m2", 3)) as Record<string, unknown>;
  const withM3 = (patch: Record<string, unknown>) => JSON.stringify({ ...m3, ...patch });

  const atLoad: [string, string][] = [
    ["a kind that is not an object", withM3({ message: 5 })],
    ["an id that is not a string", withM3({ id: 3 })],
    ["a payload that is not an object", "[1,2,3]"],
    ["a payload seq unlike the header's", withM3({ seq: "4" })],
    ["a Leaf target that is not a string", withM3({ message: undefined, leaf: { leafId: 7 } })],
    ["an unknown parent", withM3({ parentId: "ghost" })],
    ["a second kind after the first", withM3({ label: { label: "x" } })],
    ["a payload that is not JSON after its first fields", msg("m3", "m2", 3).slice(0, -12)],
  ];
  for (const [name, payload] of atLoad) {
    it(`${name}: DATA_LOSS naming the line at load`, async () => {
      await writeWithLine3(payload);
      await withEngine(dataDir, async (e) => {
        await expectDataLoss(e.load(k), 3);
        await expectDataLoss(e.read(k, 0, 10), 3);
      });
    });
  }

  const atFirstUse: [string, string][] = [
    ["a bad timestamp", withM3({ timestamp: "2025-13-45T99:00:00Z" })],
    ["content that is not a list", withM3({ message: { role: "ROLE_USER", content: 4 } })],
  ];
  for (const [name, payload] of atFirstUse) {
    it(`${name}: loads, then DATA_LOSS naming the line at first use and at every load after`, async () => {
      await writeWithLine3(payload);
      await withEngine(dataDir, async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(5);
        expect(log.last?.id).toBe("m5");
        expect(log.at(2)?.id).toBe("m2");
        const uses: (() => unknown)[] = [() => log.path(), () => log.at(3), () => log.entries()];
        for (const use of uses) {
          await expectDataLoss(Promise.resolve().then(use), 3);
        }
        await expectDataLoss(e.load(k), 3);
        await expectDataLoss(e.read(k, 0, 10), 3);
      });
      // A fresh process finds the same thing the same way.
      await withEngine(dataDir, async (e) => {
        const log = await e.load(k);
        await expectDataLoss(
          Promise.resolve().then(() => log.path()),
          3,
        );
      });
    });
  }

  it("as the last line or the first, DATA_LOSS at load (both are decoded at once)", async () => {
    const bad = withM3({ timestamp: "not a time" });
    const file = fileOf(dataDir, k);
    await writeFile(
      file,
      [encodeRecord(root), lineOf(2, msg("m2", "root", 2)), lineOf(3, bad)].join(""),
    );
    await withEngine(dataDir, (e) => expectDataLoss(e.load(k), 3));
    const badRoot = JSON.stringify({ ...(toJson(EntrySchema, root) as object), timestamp: "nope" });
    await writeFile(file, [lineOf(1, badRoot), lineOf(2, msg("m2", "root", 2))].join(""));
    await withEngine(dataDir, (e) => expectDataLoss(e.load(k), 1));
  });

  it("a key after the kind that repeats an indexed one is read as JSON.parse reads it", async () => {
    await writeWithLine3(`${msg("m3", "m2", 3).slice(0, -1)},"parentId":"root"}`);
    await withEngine(dataDir, async (e) => {
      const log = await e.load(k);
      expect(log.path("m3").map((x) => x.id)).toEqual(["root", "m3"]);
      expect(log.path().map((x) => x.id)).toEqual(["root", "m3", "m4", "m5"]);
    });
  });

  it("an unknown kind key is ignored (a newer writer's kind): the entry loads without kind", async () => {
    await writeWithLine3(withM3({ message: undefined, todoList: { items: [] } }));
    await withEngine(dataDir, async (e) => {
      const log = await e.load(k);
      expect(log.path().map((x) => x.id)).toEqual(["root", "m2", "m3", "m4", "m5"]);
      expect(log.at(3)?.kind.case).toBeUndefined();
    });
  });
});
