import { chmod, readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { crc32 } from "node:zlib";
import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { checkFile, findSessionFiles } from "./fsck-scan.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { keyPath } from "./session-keys.js";

/**
 * Encryption at rest on the JSONL engine (issue 41): sealed sessions hold
 * no content in clear, read back through the API, refuse to open a
 * payload moved elsewhere, and say clearly when the key is wrong or gone.
 */

const SECRET = "secret";
const MARKERS = ["MARKER-ALPHA-7f3a", "MARKER-BRAVO-19c2", "MARKER-CHARLIE-e04d"];

let dataDir: string;
let keyDir: string;
let keyringFile: string;
let keyring: LocalKeyring;

beforeEach(async () => {
  dataDir = await tempDir();
  keyDir = await tempDir("sessiond-keys-");
  keyringFile = path.join(keyDir, "keyring.json");
  keyring = await LocalKeyring.open(keyringFile, { create: true });
});
afterEach(async () => {
  await removeDir(dataDir);
  await removeDir(keyDir);
});

/** An engine on the data dir sealing `workspaces` with `keys` (null: no keys at all). */
function engineWith(keys: LocalKeyring | null = keyring, workspaces = [SECRET]) {
  return new JsonlEngine({
    dataDir,
    encryption: keys === null ? undefined : { keys, workspaces },
  });
}

/** Every file under `dir`, with its bytes. */
async function allFiles(dir: string): Promise<{ file: string; bytes: Buffer }[]> {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, name);
    if ((await stat(file)).isFile()) out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

async function markersOnDisk(dir: string): Promise<string[]> {
  const found = new Set<string>();
  for (const { bytes } of await allFiles(dir)) {
    for (const m of MARKERS) if (bytes.includes(m)) found.add(m);
  }
  return [...found].sort();
}

/** A session of two messages carrying markers, in `workspace`. */
async function writeSession(store: SessionStore, workspace: string, sessionId: string) {
  await store.create({ workspace, sessionId, title: "titles stay in clear" });
  const s = await store.open(workspace, sessionId);
  await s.append([user("u1", `please keep ${MARKERS[0]} safe`)]);
  await s.append([assistant("a1", `I will keep ${MARKERS[1]} and ${MARKERS[2]}`)]);
}

async function textsOf(store: SessionStore, workspace: string, sessionId: string) {
  const page = await (await store.open(workspace, sessionId)).entries();
  return page.entries.map((e) => toJsonString(EntrySchema, e)).join("\n");
}

async function caught(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a failure");
}

/** Rewrites line `seq` of `file` with `payload`, its CRC made valid (a hand edit, not damage). */
async function replacePayload(file: string, seq: number, payload: string): Promise<void> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const crc = crc32(payload, crc32(String(seq)))
    .toString(16)
    .padStart(8, "0");
  lines[seq - 1] = `{"seq":${seq},"crc":"${crc}","entry":${payload}}`;
  await writeFile(file, lines.join("\n"));
}

function payloadOf(file: string, seq: number): Promise<string> {
  return readFile(file, "utf8").then((t) => {
    const line = t.split("\n")[seq - 1] as string;
    return line.slice(line.indexOf('"entry":') + 8, -1);
  });
}

const sealedPart = (payload: string) => payload.slice(payload.indexOf('{"@sealed":'));
const clearPart = (payload: string) => payload.slice(0, payload.indexOf('{"@sealed":'));

describe("encryption at rest (JSONL)", () => {
  it("a sealed workspace's files hold none of the marker strings; the store reads them back, also after a restart", async () => {
    const engine = engineWith();
    const store = new SessionStore(engine);
    await writeSession(store, SECRET, "s1");
    // Fork and import into the sealed workspace seal under the new session's key.
    await store.fork(SECRET, "s1", { sessionId: "s1-fork" });
    await writeSession(store, "open", "c1");
    const exported = (await (await store.open("open", "c1")).entries()).entries;
    await store.import(SECRET, exported, { sessionId: "imported" });
    const before = await textsOf(store, SECRET, "s1");
    for (const m of MARKERS) expect(before).toContain(m);
    await store.close();

    // The clear workspace holds them (the grep works); the sealed one none.
    expect(await markersOnDisk(path.join(dataDir, "open"))).toEqual([...MARKERS].sort());
    expect(await markersOnDisk(path.join(dataDir, SECRET))).toEqual([]);
    const sealedFiles = (await allFiles(path.join(dataDir, SECRET))).map((f) =>
      path.basename(f.file),
    );
    expect(sealedFiles).toEqual(
      expect.arrayContaining(["s1.jsonl", "s1.key", "s1-fork.key", "imported.key"]),
    );
    // Structure and titles in clear.
    const s1 = await readFile(fileOf(dataDir, keyOf("s1", SECRET)), "utf8");
    expect(s1).toContain('"id":"u1"');
    expect(s1).toContain("titles stay in clear");

    const again = new SessionStore(engineWith());
    expect(await textsOf(again, SECRET, "s1")).toBe(before);
    for (const id of ["s1-fork", "imported"]) {
      const text = await textsOf(again, SECRET, id);
      for (const m of MARKERS) expect(text).toContain(m);
    }
    expect(await textsOf(again, "open", "c1")).toContain(MARKERS[0]);
    await again.close();
  });

  it("text search finds words in sealed sessions (decrypting as it scans), and not in clear bytes", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    await writeSession(store, SECRET, "s2");
    const res = await store.search({ workspace: SECRET, query: MARKERS[1] as string });
    expect(res.hits.map((h) => `${h.sessionId}/${h.entryId}`).sort()).toEqual(["s1/a1", "s2/a1"]);
    expect((await store.search({ workspace: SECRET, query: "nowhere-word" })).hits).toEqual([]);
    await store.close();
    // A fresh engine (nothing cached) searches the files.
    const fresh = new SessionStore(engineWith());
    const hits = await fresh.search({ workspace: SECRET, query: "please keep" });
    expect(hits.hits.map((h) => h.entryId)).toEqual(["u1", "u1"]);
    await fresh.close();
  });

  it("a sealed payload moved to another entry of the session fails to open: DATA_LOSS naming workspace, session and entry", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    await store.close();
    const file = fileOf(dataDir, keyOf("s1", SECRET));
    const u1 = await payloadOf(file, 2);
    const a1 = await payloadOf(file, 3);
    await replacePayload(file, 3, clearPart(a1) + sealedPart(u1));
    const fresh = new SessionStore(engineWith());
    const err = await caught(() => textsOf(fresh, SECRET, "s1"));
    expect(isSessiondError(err, "DATA_LOSS")).toBe(true);
    expect(err.message).toBe(
      'session "s1" in workspace "secret" is corrupt at line 3 (byte ' +
        `${(await readFile(file, "utf8")).split("\n").slice(0, 2).join("\n").length + 1}): ` +
        'entry "a1" (seq 3) does not open: its sealed content fails authentication (moved from another entry, session or seq, altered, or sealed under another data key)',
    );
    await fresh.close();
  });

  it("a sealed payload moved to the same entry id and seq of another session fails to open", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    await writeSession(store, SECRET, "s2");
    await store.close();
    const f1 = fileOf(dataDir, keyOf("s1", SECRET));
    const f2 = fileOf(dataDir, keyOf("s2", SECRET));
    await replacePayload(
      f2,
      2,
      clearPart(await payloadOf(f2, 2)) + sealedPart(await payloadOf(f1, 2)),
    );
    const fresh = new SessionStore(engineWith());
    const err = await caught(() => textsOf(fresh, SECRET, "s2"));
    expect(isSessiondError(err, "DATA_LOSS")).toBe(true);
    expect(err.message).toMatch(
      /^session "s2" in workspace "secret" is corrupt at line 2 .*entry "u1" \(seq 2\) does not open/,
    );
    // The session it came from still reads.
    expect(await textsOf(fresh, SECRET, "s1")).toContain(MARKERS[0]);
    await fresh.close();
  });

  it("without the keyring, with another keyring, or without the key file: FAILED_PRECONDITION naming workspace and session, never garbage", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    await store.close();

    const none = new SessionStore(engineWith(null));
    const noKeyring = await caught(() => textsOf(none, SECRET, "s1"));
    expect(isSessiondError(noKeyring, "FAILED_PRECONDITION")).toBe(true);
    expect(noKeyring.message).toMatch(
      /^session "s1" in workspace "secret" is encrypted \(entry "\w+", seq \d\) but no keyring is configured/,
    );
    await none.close();

    const otherFile = path.join(keyDir, "other.json");
    const other = await LocalKeyring.open(otherFile, { create: true });
    await other.rotate(SECRET);
    const wrong = new SessionStore(engineWith(other));
    const wrongKey = await caught(() => textsOf(wrong, SECRET, "s1"));
    expect(isSessiondError(wrongKey, "FAILED_PRECONDITION")).toBe(true);
    expect(wrongKey.message).toContain("does not unwrap with keyring");
    await wrong.close();

    const { rm } = await import("node:fs/promises");
    await rm(keyPath(fileOf(dataDir, keyOf("s1", SECRET))));
    const lost = new SessionStore(engineWith());
    const noKeyFile = await caught(() => textsOf(lost, SECRET, "s1"));
    expect(isSessiondError(noKeyFile, "FAILED_PRECONDITION")).toBe(true);
    expect(noKeyFile.message).toMatch(
      /^session "s1" in workspace "secret" is encrypted .* but its key file is missing \(s1\.key\)/,
    );
    await lost.close();
  });

  it("rotation: old sessions still open, new ones use the new version, rewrap moves a session over without touching its log", async () => {
    const engine = engineWith();
    const store = new SessionStore(engine);
    await writeSession(store, SECRET, "old");
    expect(await keyring.rotate(SECRET)).toBe(2);
    await writeSession(store, SECRET, "new");
    const versionOf = async (id: string) =>
      JSON.parse(await readFile(keyPath(fileOf(dataDir, keyOf(id, SECRET))), "utf8")).keyVersion;
    expect(await versionOf("old")).toBe(1);
    expect(await versionOf("new")).toBe(2);
    const logBefore = await readFile(fileOf(dataDir, keyOf("old", SECRET)));
    expect(await engine.rewrap(keyOf("old", SECRET))).toEqual({ from: 1, to: 2 });
    expect(await engine.rewrap(keyOf("old", SECRET))).toEqual({ from: 2, to: 2 });
    expect(await engine.rewrap(keyOf("c1", "open")).catch((e: Error) => e.message)).toMatch(
      /not found/,
    );
    expect(await versionOf("old")).toBe(2);
    expect(await readFile(fileOf(dataDir, keyOf("old", SECRET)))).toEqual(logBefore);
    await store.close();

    // Version 1 gone from the keyring: the rewrapped session still opens.
    const ring = JSON.parse(await readFile(keyringFile, "utf8"));
    delete ring.keys[SECRET].versions["1"];
    await writeFile(keyringFile, JSON.stringify(ring), { mode: 0o600 });
    const fresh = new SessionStore(engineWith(await LocalKeyring.open(keyringFile)));
    expect(await textsOf(fresh, SECRET, "old")).toContain(MARKERS[2]);
    expect(await textsOf(fresh, SECRET, "new")).toContain(MARKERS[2]);
    await fresh.close();
  });

  it("fsck (no keys) judges a sealed session by its frames and structure: ok, not an error", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    await store.close();
    const files = (await findSessionFiles(dataDir)).filter((f) => f.workspace === SECRET);
    expect(files.map((f) => f.sessionId)).toEqual(["s1"]);
    const report = await checkFile(files[0] as (typeof files)[number], new Map());
    expect(report).toMatchObject({ status: "ok", entries: 3 });
  });

  it("deleting a sealed session removes its key file", async () => {
    const store = new SessionStore(engineWith());
    await writeSession(store, SECRET, "s1");
    const keyFile = keyPath(fileOf(dataDir, keyOf("s1", SECRET)));
    expect((await stat(keyFile)).isFile()).toBe(true);
    await store.delete(SECRET, "s1");
    await expect(stat(keyFile)).rejects.toThrow(/ENOENT/);
    await store.close();
  });
});

describe("the local keyring file", () => {
  it("is created 0600 and refused when group or others can read it", async () => {
    expect((await stat(keyringFile)).mode & 0o777).toBe(0o600);
    await chmod(keyringFile, 0o644);
    const err = await caught(() => LocalKeyring.open(keyringFile));
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    expect(err.message).toBe(
      `keyring ${keyringFile} is readable or writable by group or others (mode 0644); it holds keys: chmod 600 ${keyringFile}`,
    );
  });

  it("is refused when malformed, naming the file and what is wrong", async () => {
    const cases: [string, RegExp][] = [
      ["not json", /is malformed: not JSON/],
      ['{"format":"x","version":1,"keys":{}}', /"format" must be "sessiond-keyring"/],
      [
        '{"format":"sessiond-keyring","version":1,"keys":{"w":{"current":1,"versions":{"1":"c2hvcnQ="}}}}',
        /key "w" version 1 is not 32 bytes in base64/,
      ],
      [
        `{"format":"sessiond-keyring","version":1,"keys":{"w":{"current":2,"versions":{"1":"${Buffer.alloc(32).toString("base64")}"}}}}`,
        /key "w": "current" names no version it has/,
      ],
    ];
    for (const [text, why] of cases) {
      await writeFile(keyringFile, text, { mode: 0o600 });
      const err = await caught(() => LocalKeyring.open(keyringFile));
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
      expect(err.message).toMatch(why);
      expect(err.message).toContain(keyringFile);
    }
  });

  it("rotation keeps old versions; a key is made on first use, once, under the lock", async () => {
    const a = await LocalKeyring.open(keyringFile);
    const b = await LocalKeyring.open(keyringFile);
    const data = Buffer.alloc(32, 7);
    const ctx = { workspace: "w", session: "s" };
    const [wa, wb] = await Promise.all([a.wrap("w", data, ctx), b.wrap("w", data, ctx)]);
    // Both wrapped under the one key both see.
    expect(await b.unwrap(wa, ctx)).toEqual(data);
    expect(await a.unwrap(wb, ctx)).toEqual(data);
    expect(await a.rotate("w")).toBe(2);
    const w2 = await b.wrap("w", data, ctx);
    expect(w2.version).toBe(2);
    expect(await a.unwrap(wa, ctx)).toEqual(data);
    expect(await a.list()).toEqual([{ keyId: "w", current: 2, versions: [1, 2] }]);
    // Bound to its context: another session's context does not unwrap it.
    const err = await caught(() => a.unwrap(wa, { workspace: "w", session: "other" }));
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
  });
});
