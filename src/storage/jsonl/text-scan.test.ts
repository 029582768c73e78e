import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { expectCode, ts } from "../../../test/support/fixtures.js";
import {
  damageArb,
  encodeLines,
  expectedRead,
  writtenLog,
} from "../../../test/support/jsonl/arbitraries.js";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import type { EntryScan } from "../engine.js";
import { type FsOps, nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { encodeFileContent } from "./record.js";
import { scanFile } from "./text-scan.js";

/**
 * The search scan of a session file against the reader's rules (the
 * reader property's random logs and damage): it offers exactly the
 * records a load keeps, in seq order, reports `damaged` exactly when a
 * load fails with DATA_LOSS, skips only records without the needles, and
 * stops reading once the visitor says so.
 */

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await tempDir("sessiond-text-scan-");
  file = path.join(dir, "s.jsonl");
});
afterAll(() => removeDir(dir));

/** Every entry `scanFile` offers, and how it ended. */
async function offered(scan: Partial<EntryScan> = {}, ops: FsOps = nodeFs) {
  const seen: Entry[] = [];
  const end = await scanFile(ops, file, {
    afterSeq: 0,
    needles: [],
    visit: (e) => {
      seen.push(e);
      return true;
    },
    ...scan,
  });
  return { seqs: seen.map((e) => Number(e.seq)), seen, damaged: end.damaged };
}

const SID = "prop";
const logWithDamage = writtenLog(SID).chain(([entries, ends]) =>
  fc.tuple(fc.constant(entries), fc.constant(ends), fc.array(damageArb, { maxLength: 3 })),
);

describe("text scan of damaged files", () => {
  it("offers the records a load keeps and is damaged exactly when a load fails", async () => {
    await fc.assert(
      fc.asyncProperty(logWithDamage, async ([entries, ends, damages]) => {
        const lines = encodeLines(entries, ends);
        const damaged = damages.reduce<Buffer>((b, d) => d(b), Buffer.concat(lines));
        const want = expectedRead(damaged, lines, ends);
        await writeFile(file, damaged);
        const got = await offered();
        expect(got.damaged).toBe(want.kind === "corrupt" || want.kept === 0);
        expect(got.seqs).toEqual(Array.from({ length: want.kept }, (_, i) => i + 1));
        for (const e of got.seen) {
          expect(toJsonString(EntrySchema, e)).toBe(
            toJsonString(EntrySchema, entries[Number(e.seq) - 1] as Entry),
          );
        }
      }),
      { numRuns: 300 },
    );
  }, 120_000);

  it("offers nothing at or before afterSeq", async () => {
    const [entries, ends] = fc.sample(writtenLog(SID, 12), { numRuns: 1, seed: 7 })[0] as [
      Entry[],
      boolean[],
    ];
    await writeFile(file, Buffer.concat(encodeLines(entries, ends)));
    const got = await offered({ afterSeq: 3 });
    expect(got.seqs).toEqual(entries.slice(3).map((e) => Number(e.seq)));
  });

  it("an empty file is damaged", async () => {
    await writeFile(file, "");
    expect(await offered()).toMatchObject({ seqs: [], damaged: true });
  });
});

function said(seq: number, text: string): Entry {
  return create(EntrySchema, {
    id: `e${seq}`,
    parentId: seq === 1 ? undefined : `e${seq - 1}`,
    seq: BigInt(seq),
    timestamp: ts(1_700_000_000 + seq),
    kind:
      seq === 1
        ? { case: "sessionInfo", value: { sessionId: SID, formatVersion: 1 } }
        : {
            case: "message",
            value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
          },
  });
}

describe("text scan with needles", () => {
  const words = ["alpha", "Beta", "GAMMA", "alphabet", "a-b", "x"];
  it("skips exactly the records whose bytes lack a needle, ASCII case ignored", async () => {
    const texts = fc.array(
      fc.array(fc.constantFrom(...words), { maxLength: 4 }).map((w) => w.join(" ")),
      {
        maxLength: 20,
      },
    );
    const needles = fc.uniqueArray(
      fc.constantFrom("alpha", "beta", "gamma", "bet", "a-b", "x", "ph"),
      {
        minLength: 1,
        maxLength: 3,
      },
    );
    await fc.assert(
      fc.asyncProperty(texts, needles, async (ts, ns) => {
        const entries = [said(1, ""), ...ts.map((t, i) => said(i + 2, t))];
        await writeFile(file, encodeFileContent(entries));
        const got = await offered({ needles: ns });
        const want = entries
          .filter((e) => {
            const stored = toJsonString(EntrySchema, e).replace(/[A-Z]/g, (c) => c.toLowerCase());
            return ns.every((n) => stored.includes(n));
          })
          .map((e) => Number(e.seq));
        expect(got.seqs).toEqual(want);
        expect(got.damaged).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("a damaged file whose bytes lack a needle ends with no damage; with every needle, with its damage", async () => {
    const entries = [said(1, ""), said(2, "alpha"), said(3, "beta gamma")];
    // A changed byte in record 2: its checksum no longer holds.
    const bytes = encodeFileContent(entries).toString("latin1").replace("alpha", "alphx");
    await writeFile(file, bytes, "latin1");
    expect(await offered({ needles: ["zebra"] })).toMatchObject({ seqs: [], damaged: false });
    expect(await offered({ needles: ["beta", "zebra"] })).toMatchObject({
      seqs: [],
      damaged: false,
    });
    expect(await offered({ needles: ["gamma"] })).toMatchObject({ seqs: [], damaged: true });
    expect(await offered({ needles: [] })).toMatchObject({ seqs: [1], damaged: true });
  });

  it("finds a record longer than the read chunk", async () => {
    const long = `${"filler ".repeat(400_000)}needle`;
    await writeFile(
      file,
      encodeFileContent([said(1, ""), said(2, "short"), said(3, long), said(4, "Needle")]),
    );
    expect((await offered({ needles: ["needle"] })).seqs).toEqual([3, 4]);
  });

  it("stops reading once the visitor says the page is full", async () => {
    const entries = [
      said(1, ""),
      ...Array.from({ length: 5000 }, (_, i) => said(i + 2, `hit ${"x".repeat(400)}`)),
    ];
    await writeFile(file, encodeFileContent(entries));
    let reads = 0;
    const counting: FsOps = {
      ...nodeFs,
      read: (...args) => {
        reads++;
        return nodeFs.read(...args);
      },
    };
    const got = await offered({ needles: ["hit"], visit: () => false }, counting);
    expect(got.damaged).toBe(false);
    expect(reads).toBe(1);
  });
});

describe("JsonlEngine.scanEntries", () => {
  it("scans a subagent's file too, and a missing session is NOT_FOUND", async () => {
    const dataDir = await tempDir("sessiond-scan-entries-");
    const engine = new JsonlEngine({ dataDir });
    try {
      const root = (sessionId: string, parentSessionId?: string) =>
        create(EntrySchema, {
          id: "e1",
          seq: 1n,
          timestamp: ts(1_700_000_000),
          kind: { case: "sessionInfo", value: { sessionId, parentSessionId, formatVersion: 1 } },
        });
      await engine.create({ workspace: "default", sessionId: "p1" }, [root("p1")]);
      await engine.create({ workspace: "default", sessionId: "c1" }, [
        root("c1", "p1"),
        said(2, "in the child"),
      ]);
      const seen: string[] = [];
      const scan = { afterSeq: 0, needles: ["child"], visit: (e: Entry) => seen.push(e.id) > 0 };
      expect(await engine.scanEntries({ workspace: "default", sessionId: "c1" }, scan)).toEqual({
        damaged: false,
      });
      expect(seen).toEqual(["e2"]);
      await expectCode(
        engine.scanEntries({ workspace: "default", sessionId: "gone" }, scan),
        "NOT_FOUND",
        '"gone"',
      );
    } finally {
      await engine.close();
      await removeDir(dataDir);
    }
  });
});
