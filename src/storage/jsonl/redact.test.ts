import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntrySchema, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, ts, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { planWithhold, withheldMarker } from "../../core/withheld.js";
import { SessionStore } from "../../store/session-store.js";
import type { SessionKey, WithholdPlanner } from "../engine.js";
import { LocalKeyring } from "../keys/index.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { checkFrame } from "./record.js";

/**
 * Redaction on JSONL: the one sanctioned rewrite of a log (copy with the
 * records replaced, fsync, rename over the log, directory fsync, under the
 * session's lock). The bytes of the data dir no longer hold the content;
 * every line is whole with a valid CRC; other holders of the session (an
 * engine of another process with a handle and a lease on the old file)
 * neither read nor append to the replaced inode.
 */

const SECRET = "sk-live-JSONLMARKER-31337";
const MARK = withheldMarker(WithheldReason.REDACTED, "ops", ts(1_700_000_000, 0), "pasted key");

const redactPlan =
  (ids: string[]): WithholdPlanner =>
  (log) =>
    planWithhold((id) => log.get(id), log.sessionId, ids, MARK);

/** Every file of a directory tree, with its bytes. */
async function allFiles(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, name);
    if ((await stat(file)).isFile()) out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

/** Checks every line of a session file: whole, framed, CRC right, seqs dense from 1. */
function checkLines(bytes: Buffer): number {
  let start = 0;
  let seq = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    expect(nl).toBeGreaterThan(start);
    const frame = checkFrame(bytes, start, nl);
    expect(typeof frame).not.toBe("string");
    expect(typeof frame === "string" ? 0 : frame.seq).toBe(++seq);
    start = nl + 1;
  }
  return seq;
}

describe("redaction on JSONL", () => {
  let dataDir: string;
  const engines: JsonlEngine[] = [];
  const k: SessionKey = keyOf("redacted");

  const open = (o: ConstructorParameters<typeof JsonlEngine>[0] | object = {}) => {
    const e = new JsonlEngine({ dataDir, ...o });
    engines.push(e);
    return e;
  };

  beforeEach(async () => {
    dataDir = await tempDir();
    const store = new SessionStore(open());
    await store.create({ sessionId: k.sessionId });
    const s = await store.open(undefined, k.sessionId);
    // Several writes, one of three entries (its records carry the `more` marker).
    await s.append([user("u1", `key ${SECRET}`)]);
    await s.append([assistant("a1", `echo ${SECRET}`), user("u2", "fine"), user("u3", "x")]);
    await s.append([user("u4", "last")]);
  });

  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    await removeDir(dataDir);
  });

  it("leaves no byte of the content in the data dir, every line whole with its CRC, the rest unchanged", async () => {
    const engine = engines[0] as JsonlEngine;
    const file = fileOf(dataDir, k);
    const before = await readFile(file);
    const inode = (await stat(file)).ino;
    expect(before.includes(SECRET)).toBe(true);
    const r = await engine.withhold(k, redactPlan(["u1", "a1"]));
    expect(r.changed.map((e) => e.id)).toEqual(["u1", "a1"]);
    for (const { file: f, bytes } of await allFiles(dataDir)) {
      expect(bytes.includes(SECRET), f).toBe(false);
    }
    const after = await readFile(file);
    expect((await stat(file)).ino).not.toBe(inode); // a new file took the name
    expect(checkLines(after)).toBe(6);
    // The lines not redacted are byte for byte the old ones, the `more` markers kept.
    const lines = (b: Buffer) => b.toString().trimEnd().split("\n");
    const [old, now] = [lines(before), lines(after)];
    for (const i of [0, 3, 4, 5]) expect(now[i]).toBe(old[i]);
    expect(now[2]).toContain('"more":true');
    expect((await readdir(path.dirname(file))).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    // A fresh engine (a restart) reads the whole log, redacted.
    const fresh = open();
    const page = await fresh.read(k, 0, 100);
    expect(page.entries.map((e) => e.id).slice(1)).toEqual(["u1", "a1", "u2", "u3", "u4"]);
    expect(page.entries[1]?.withheld?.why).toBe("pasted key");
    // Appends go on after the rewrite, on the new file.
    await (await new SessionStore(engine).open(undefined, k.sessionId)).append([
      user("u5", "after"),
    ]);
    expect(checkLines(await readFile(file))).toBe(7);
  });

  it("appends racing a redaction in the same process all land, in order, on the new file", async () => {
    const engine = engines[0] as JsonlEngine;
    const s = await new SessionStore(engine).open(undefined, k.sessionId);
    const racing = Array.from({ length: 40 }, (_, i) => s.append([user(`r${i}`, `race ${i}`)]));
    const redaction = engine.withhold(k, redactPlan(["u1", "a1"]));
    const more = Array.from({ length: 40 }, (_, i) => s.append([user(`q${i}`, `after ${i}`)]));
    await Promise.all([...racing, redaction, ...more]);
    const bytes = await readFile(fileOf(dataDir, k));
    expect(checkLines(bytes)).toBe(6 + 80);
    expect(bytes.includes(SECRET)).toBe(false);
    const fresh = (await open().read(k, 0, 1000)).entries;
    expect(fresh.length).toBe(86);
    expect(fresh.filter((e) => e.withheld !== undefined).map((e) => e.id)).toEqual(["u1", "a1"]);
  });

  it("a retry writes nothing (the file is not replaced again)", async () => {
    const engine = engines[0] as JsonlEngine;
    const file = fileOf(dataDir, k);
    await engine.withhold(k, redactPlan(["u1"]));
    const inode = (await stat(file)).ino;
    const r = await engine.withhold(k, redactPlan(["u1"]));
    expect(r.changed).toEqual([]);
    expect(r.entries[0]?.withheld?.why).toBe("pasted key");
    expect((await stat(file)).ino).toBe(inode);
  });

  it("a copy left by a crashed redaction (it holds the entries it did not redact) is removed by the next one", async () => {
    const engine = engines[0] as JsonlEngine;
    const dir = path.dirname(fileOf(dataDir, k));
    const left = path.join(dir, `.tmp-${k.sessionId}-0123456789ab`);
    const other = path.join(dir, `.tmp-${k.sessionId}x-0123456789ab`);
    await writeFile(left, `a crashed copy with ${SECRET}`);
    await writeFile(other, "another session's create in flight");
    await engine.withhold(k, redactPlan(["u1", "a1"]));
    const names = await readdir(dir);
    expect(names).not.toContain(path.basename(left));
    expect(names).toContain(path.basename(other));
  });

  it("another process's engine holding the old file (handle and lease) reads the new one and never appends to the old inode", async () => {
    const file = fileOf(dataDir, k);
    // B: another process's engine that wrote last and still holds its lease and handle.
    const b = open({ leaseIdleMs: 60_000 });
    const store = new SessionStore(b);
    await (await store.open(undefined, k.sessionId)).append([user("b1", "from b")]);
    // A redacts: it waits for B's lease (B hands it over: A's wait marker), then rewrites.
    const a = open();
    await a.withhold(k, redactPlan(["u1", "a1"]));
    // B reads the new file, not its old handle's bytes.
    const read = await b.read(k, 0, 100);
    expect(read.entries.find((e) => e.id === "u1")?.withheld?.reason).toBe(WithheldReason.REDACTED);
    expect(read.entries.map((e) => toJsonString(EntrySchema, e)).join()).not.toContain(
      "JSONLMARKER",
    );
    // B appends: to the new file (or refused, retry-safe), never to the replaced inode.
    const s = await store.open(undefined, k.sessionId);
    try {
      await s.append([user("b2", "after the redaction")]);
    } catch {
      await s.append([user("b2", "after the redaction")]);
    }
    const bytes = await readFile(file);
    expect(checkLines(bytes)).toBe(8);
    expect(bytes.includes("b2")).toBe(true);
    expect(bytes.includes(SECRET)).toBe(false);
    const fresh = await open().read(k, 0, 100);
    expect(fresh.entries.map((e) => e.id).slice(1)).toEqual([
      "u1",
      "a1",
      "u2",
      "u3",
      "u4",
      "b1",
      "b2",
    ]);
  });

  it("in a sealed session the rewritten records are sealed too, and read back redacted after a restart", async () => {
    const keyDir = await tempDir("sessiond-keys-");
    try {
      const keys = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
      const sealed = (): JsonlEngine => open({ encryption: { keys, workspaces: ["vault"] } });
      const sk = keyOf("sealed", "vault");
      const store = new SessionStore(sealed());
      await store.create({ workspace: "vault", sessionId: sk.sessionId });
      const s = await store.open("vault", sk.sessionId);
      await s.append([user("v1", `key ${SECRET}`), user("v2", "other")]);
      await s.redact(["v1"], { by: "ops", why: "WHYMARKER-secret-reason" });
      const bytes = await readFile(fileOf(dataDir, sk));
      expect(bytes.includes(SECRET)).toBe(false);
      // The marker (who, when, why) is structure, in clear like ids and kinds: readable without keys.
      expect(bytes.includes("WHYMARKER")).toBe(true);
      const line = bytes.toString().split("\n")[1] as string;
      expect(line).toContain('{"@sealed":');
      expect(checkLines(bytes)).toBe(3);
      const fresh = await sealed().read(sk, 0, 10);
      expect(fresh.entries[1]?.withheld?.why).toBe("WHYMARKER-secret-reason");
    } finally {
      await removeDir(keyDir);
    }
  });
});
