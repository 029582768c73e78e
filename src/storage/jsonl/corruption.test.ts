import { appendFile, readFile, writeFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, expectCode, user } from "../../../test/support/fixtures.js";
import {
  brokenFiles,
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  seedSession,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";

/**
 * Damage followed by a valid record is not a torn tail: records behind it
 * may have been acknowledged, so dropping them would lose data silently.
 * The session must fail with DATA_LOSS naming the line, stay untouched,
 * show as corrupt in listings, and not affect its neighbours.
 */

const bad = keyOf("damaged");
const good = keyOf("healthy");
const ENTRIES = 6;
const LINE = 3;

/** Replaces bytes of line `n` (1-based) through `edit`, keeping every other byte. */
async function editLine(file: string, n: number, edit: (line: Buffer) => Buffer) {
  const buf = await readFile(file);
  const starts = lineStarts(buf);
  const from = starts[n - 1] as number;
  const to = (starts[n] as number) - 1;
  const line = Buffer.from(buf.subarray(from, to));
  await writeFile(file, Buffer.concat([buf.subarray(0, from), edit(line), buf.subarray(to)]));
}

/** Changes one digit of the line's payload (its timestamp), keeping it valid JSON. */
function flipDigit(line: Buffer): Buffer {
  const text = line.toString();
  const at = text.indexOf('"timestamp":"') + '"timestamp":"'.length + 3;
  const digit = text[at] as string;
  expect(digit).toMatch(/[0-9]/);
  const flipped = `${text.slice(0, at)}${(Number(digit) + 1) % 10}${text.slice(at + 1)}`;
  JSON.parse(flipped);
  return Buffer.from(flipped);
}

const damages: [string, (file: string) => Promise<void>][] = [
  ["a line cut short", (f) => editLine(f, LINE, (l) => l.subarray(0, l.length / 2))],
  ["a line of zeros", (f) => editLine(f, LINE, (l) => Buffer.alloc(l.length))],
  ["garbage inserted", (f) => editLine(f, LINE, (l) => Buffer.concat([Buffer.from("junk\n"), l]))],
  ["a flipped digit that still parses", (f) => editLine(f, LINE, flipDigit)],
];

describe("mid-file corruption", () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await tempDir();
    await withEngine(dataDir, async (e) => {
      await seedSession(e, bad, ENTRIES);
      await seedSession(e, good, 2);
    });
  });
  afterEach(() => removeDir(dataDir));

  for (const [name, damage] of damages) {
    it(`${name}: DATA_LOSS naming line ${LINE} for load, read and append; file untouched`, async () => {
      const file = fileOf(dataDir, bad);
      await damage(file);
      const before = await readFile(file);
      await withEngine(dataDir, async (e) => {
        for (const attempt of [
          e.load(bad),
          e.read(bad, 0, 10),
          e.append(bad, appendOf([user("refused")])),
          e.append(bad, appendOf([user("refused-again")])),
        ]) {
          const err = await expectCode(attempt, "DATA_LOSS");
          expect(err.message).toContain(`line ${LINE}`);
          expect(err.message).toContain('"damaged"');
        }
        expect(await readFile(file)).toEqual(before);
        expect(await brokenFiles(file)).toEqual([]);

        await e.append(good, appendOf([user("still-fine")]));
        expect((await e.load(good)).headSeq).toBe(3);

        const records = await e.list("default");
        const corrupt = records.find((r) => r.sessionId === "damaged");
        expect(corrupt?.health).toBe("corrupt");
        expect(corrupt?.healthDetail).toContain(`line ${LINE}`);
        expect(corrupt?.headSeq).toBe(LINE - 1);
        expect(corrupt?.root?.id).toBe("root-damaged");
        expect(records.find((r) => r.sessionId === "healthy")?.health).toBe("ok");
      });
    });
  }

  it("a flipped digit in the last line is a torn tail, repaired by the next append", async () => {
    const file = fileOf(dataDir, bad);
    await editLine(file, ENTRIES, flipDigit);
    await withEngine(dataDir, async (e) => {
      expect((await e.load(bad)).headSeq).toBe(ENTRIES - 1);
      const r = await e.append(bad, appendOf([user("after")]));
      expect(r.headSeq).toBe(ENTRIES);
    });
    expect(await brokenFiles(file)).toHaveLength(1);
    await withEngine(dataDir, async (e) => expect((await e.load(bad)).headSeq).toBe(ENTRIES));
  });

  it("a duplicated last record is corruption, not a tail to cut (it may be acknowledged)", async () => {
    const file = fileOf(dataDir, bad);
    const buf = await readFile(file);
    const starts = lineStarts(buf);
    await appendFile(file, buf.subarray(starts[ENTRIES - 1] as number));
    const err = await withEngine(dataDir, (e) => expectCode(e.load(bad), "DATA_LOSS"));
    expect(err.message).toContain(`line ${ENTRIES + 1}`);
  });

  it("corruption written by another process is noticed by a reader holding the session", async () => {
    await withEngine(dataDir, async (e) => {
      expect((await e.load(bad)).headSeq).toBe(ENTRIES);
      const file = fileOf(dataDir, bad);
      await appendFile(file, Buffer.from("torn bits\n"));
      expect((await e.load(bad)).headSeq).toBe(ENTRIES);
      const buf = await readFile(file);
      const starts = lineStarts(buf);
      await appendFile(file, buf.subarray(starts[1] as number, starts[2] as number));
      const err = await expectCode(e.load(bad), "DATA_LOSS");
      expect(err.message).toContain(`line ${ENTRIES + 1}`);
    });
  });
});
