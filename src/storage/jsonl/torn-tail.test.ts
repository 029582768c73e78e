import { appendFile, readFile, truncate, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, expectCode, user } from "../../../test/support/fixtures.js";
import {
  brokenFiles,
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  scanFile,
  seedSession,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { encodeRecord } from "./record.js";

/**
 * A crash in the middle of an append leaves a torn tail. Readers must see
 * the valid prefix, and the next writer must cut the tail (saving it
 * aside) before appending, or its records would be glued onto the partial
 * line and become mid-file corruption.
 */

const k = keyOf("torn");
const ENTRIES = 5;

interface Shape {
  name: string;
  /** Damages the file; returns how many records remain valid. */
  damage(file: string, original: Buffer): Promise<number>;
}

const shapes: Shape[] = [
  {
    name: "cut mid-line",
    async damage(file, original) {
      const starts = lineStarts(original);
      const last = starts[starts.length - 2] as number;
      await truncate(file, last + Math.floor((original.length - last) / 2));
      return ENTRIES - 1;
    },
  },
  {
    name: "missing final newline",
    async damage(file, original) {
      await truncate(file, original.length - 1);
      return ENTRIES - 1;
    },
  },
  {
    name: "trailing zero bytes",
    async damage(file) {
      await appendFile(file, Buffer.alloc(4096));
      return ENTRIES;
    },
  },
  {
    name: "trailing garbage",
    async damage(file) {
      await appendFile(file, Buffer.from('garbage {"seq":\n\u00ff\u0001 more garbage\n{"x'));
      return ENTRIES;
    },
  },
  {
    name: "partial record",
    async damage(file) {
      const next = user("m6", "never acknowledged", { parentId: `m${ENTRIES}` });
      next.seq = BigInt(ENTRIES + 1);
      const line = Buffer.from(encodeRecord(next));
      await appendFile(file, line.subarray(0, line.length - 7));
      return ENTRIES;
    },
  },
];

describe("torn tail", () => {
  let dataDir: string;
  let file: string;

  beforeEach(async () => {
    dataDir = await tempDir();
    file = fileOf(dataDir, k);
    await withEngine(dataDir, (e) => seedSession(e, k, ENTRIES));
  });
  afterEach(() => removeDir(dataDir));

  for (const shape of shapes) {
    it(`${shape.name}: is read as the valid prefix and repaired by the next append`, async () => {
      const original = await readFile(file);
      const valid = await shape.damage(file, original);
      const damaged = await readFile(file);
      const goodBytes = lineStarts(original)[valid] as number;

      await withEngine(dataDir, async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(valid);
        expect((await e.read(k, 0, 100)).entries).toHaveLength(valid);
        expect(await readFile(file), "readers never truncate").toEqual(damaged);

        await e.append(k, appendOf([user("after-1")]));
        await e.append(k, appendOf([user("after-2")]));
      });

      const broken = await brokenFiles(file);
      expect(broken).toHaveLength(1);
      const saved = await readFile(path.join(path.dirname(file), broken[0] as string));
      expect(saved).toEqual(damaged.subarray(goodBytes));
      const repaired = await readFile(file);
      expect(repaired.subarray(0, goodBytes)).toEqual(original.subarray(0, goodBytes));

      const scanned = await scanFile(file);
      expect(scanned.verdict).toEqual({ kind: "ok" });
      expect(scanned.end).toBe(repaired.length);
      expect(scanned.log.headSeq).toBe(valid + 2);
      await withEngine(dataDir, async (e) => {
        const log = await e.load(k);
        expect(log.headSeq).toBe(valid + 2);
        expect(log.leafId).toBe("after-2");
        expect(log.get("after-2")?.parentId).toBe("after-1");
      });
    });
  }

  for (const shape of shapes) {
    it(`${shape.name}: without tail repair (negative control) the appends end in mid-file corruption`, async () => {
      const original = await readFile(file);
      const valid = await shape.damage(file, original);
      await withEngine(
        dataDir,
        async (e) => {
          await e.append(k, appendOf([user("after-1")]));
          await e.append(k, appendOf([user("after-2")]));
        },
        { debug: { noTailRepair: true } },
      );
      const err = await withEngine(dataDir, (e) => expectCode(e.load(k), "DATA_LOSS"));
      expect(err.message).toContain(`line ${valid + 1}`);
      expect(await brokenFiles(file)).toEqual([]);
    });
  }

  it("a tail repaired by one writer is not repaired again (a single .broken file)", async () => {
    await appendFile(file, Buffer.from("half a line"));
    await withEngine(dataDir, async (e) => {
      for (let i = 0; i < 5; i++) await e.append(k, appendOf([user(`x${i}`)]));
    });
    expect(await brokenFiles(file)).toHaveLength(1);
    expect((await scanFile(file)).log.headSeq).toBe(ENTRIES + 5);
  });

  it("a file holding only a torn first line is corrupt, not an empty session", async () => {
    const original = await readFile(file);
    await writeFile(file, original.subarray(0, 20));
    const err = await withEngine(dataDir, (e) => expectCode(e.load(k), "DATA_LOSS"));
    expect(err.message).toContain("line 1");
  });
});
