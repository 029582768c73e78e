import { readFile, truncate } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, expectCode, rootEntry, seqs, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  lineStarts,
  removeDir,
  scanFile,
  tempDir,
} from "../../../test/support/jsonl/fixtures.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * Another writer (here a second engine on the same directory, standing in
 * for another process) appends behind this engine's back. Reads must pick
 * its records up, and this engine's next append must go after them; a file
 * that shrank behind its back must be refused, not overwritten.
 */
describe("fencing against another writer", () => {
  let dataDir: string;
  let a: JsonlEngine;
  let b: JsonlEngine;
  const k = keyOf("fenced");

  beforeEach(async () => {
    dataDir = await tempDir();
    a = new JsonlEngine({ dataDir, leaseIdleMs: 5 });
    b = new JsonlEngine({ dataDir, leaseIdleMs: 5 });
    await a.create(k, [rootEntry(k.sessionId)]);
    await a.append(k, appendOf([user("a1")]));
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await removeDir(dataDir);
  });

  it("load and read see the other writer's appends; the next append goes after them", async () => {
    expect((await a.load(k)).headSeq).toBe(2);
    for (const id of ["b1", "b2", "b3"]) await b.append(k, appendOf([user(id)]));

    const log = await a.load(k);
    expect(log.headSeq).toBe(5);
    expect(log.leafId).toBe("b3");
    expect((await a.read(k, 2, 10)).entries.map((e) => e.id)).toEqual(["b1", "b2", "b3"]);

    await b.append(k, appendOf([user("b4")]));
    const r = await a.append(k, appendOf([user("a2")]));
    expect(seqs(r.entries)).toEqual([7]);
    expect(r.entries[0]?.parentId).toBe("b4");
    expect((await b.load(k)).leafId).toBe("a2");
  });

  it("both writers appending concurrently end with dense seqs and every entry once", async () => {
    const ids = (p: string) => Array.from({ length: 40 }, (_, i) => `${p}${i}`);
    await Promise.all([
      ...ids("x").map((id) => a.append(k, appendOf([user(id)]))),
      ...ids("y").map((id) => b.append(k, appendOf([user(id)]))),
    ]);
    const scanned = await scanFile(fileOf(dataDir, k));
    expect(scanned.verdict.kind).toBe("ok");
    expect(scanned.log.headSeq).toBe(82);
    for (const id of [...ids("x"), ...ids("y")]) expect(scanned.log.has(id)).toBe(true);
    expect((await a.load(k)).headSeq).toBe(82);
    expect((await b.load(k)).headSeq).toBe(82);
  });

  it("a file that shrank behind the writer's back is refused, then reloaded", async () => {
    await a.append(k, appendOf([user("a2")]));
    const file = fileOf(dataDir, k);
    const starts = lineStarts(await readFile(file));
    await truncate(file, starts[2] as number);

    const err = await expectCode(a.append(k, appendOf([user("refused")])), "UNAVAILABLE");
    expect(err.message).toContain("shrank");
    expect((await scanFile(file)).log.headSeq).toBe(2);

    const r = await a.append(k, appendOf([user("a3")]));
    expect(seqs(r.entries)).toEqual([3]);
    expect(r.entries[0]?.parentId).toBe("a1");
  });

  it("a reader whose file shrank reloads it instead of failing", async () => {
    await a.append(k, appendOf([user("a2")]));
    const file = fileOf(dataDir, k);
    const starts = lineStarts(await readFile(file));
    await truncate(file, starts[2] as number);
    expect((await a.load(k)).headSeq).toBe(2);
  });
});
