import { readdir, readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { assistant, label, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { type FsOps, nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { sealSession, sealSessions } from "./seal-sessions.js";
import { keyPath } from "./session-keys.js";

/**
 * `sessiond seal` on the JSONL engine: plaintext sessions of a workspace
 * sealed after the fact by the sanctioned rewrite (key file first, then
 * copy, fsync, rename, directory fsync, under the session's lease).
 */

const WS = "team";
const MARKERS = ["SEALME-ALPHA-51c0", "SEALME-BRAVO-88d1", "SEALME-CHARLIE-0b7e"];

let dataDir: string;
let keyDir: string;
let keyring: LocalKeyring;

beforeEach(async () => {
  dataDir = await tempDir();
  keyDir = await tempDir("sessiond-keys-");
  keyring = await LocalKeyring.open(path.join(keyDir, "keyring.json"), { create: true });
});
afterEach(async () => {
  await removeDir(dataDir);
  await removeDir(keyDir);
});

/** An engine on the data dir that opens sealed sessions (and seals no new ones). */
const reader = () => new JsonlEngine({ dataDir, encryption: { keys: keyring, workspaces: [] } });

async function markersUnder(dir: string): Promise<string[]> {
  const found = new Set<string>();
  for (const name of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, name);
    if (!(await stat(file)).isFile()) continue;
    const bytes = await readFile(file);
    for (const m of MARKERS) if (bytes.includes(m)) found.add(m);
  }
  return [...found].sort();
}

/** Two plaintext sessions (one with a multi-record write, a label, a forked subagent). */
async function writeClear(): Promise<void> {
  const store = new SessionStore(new JsonlEngine({ dataDir }));
  await store.create({ workspace: WS, sessionId: "s1", title: "stays in clear" });
  const s = await store.open(WS, "s1");
  await s.append([user("u1", `keep ${MARKERS[0]} safe`)]);
  await s.append([assistant("a1", `kept ${MARKERS[1]}`), user("u2", `and ${MARKERS[2]}`)]);
  await s.append([label("l1", "checkpoint")]);
  await store.create({ workspace: WS, sessionId: "s2" });
  await (await store.open(WS, "s2")).append([user("v1", `also ${MARKERS[0]}`)]);
  await store.close();
}

async function textsOf(engine: JsonlEngine, sessionId: string): Promise<string> {
  const page = await engine.read(keyOf(sessionId, WS), 0, 1000);
  return page.entries.map((e) => toJsonString(EntrySchema, e)).join("\n");
}

async function readAll(): Promise<Record<string, string>> {
  const e = reader();
  try {
    return { s1: await textsOf(e, "s1"), s2: await textsOf(e, "s2") };
  } finally {
    await e.close();
  }
}

const options = (fs?: FsOps) => ({ dataDir, keys: keyring, fs });

describe("sessiond seal (JSONL)", () => {
  it("seals existing plaintext sessions: no marker left in the data dir, every read the same", async () => {
    await writeClear();
    const before = await readAll();
    expect(await markersUnder(dataDir)).toEqual([...MARKERS].sort());

    const out = await sealSessions(options(), WS, ["s1", "s2"]);
    expect(out).toEqual([
      { sessionId: "s1", result: "sealed", records: 3 },
      { sessionId: "s2", result: "sealed", records: 1 },
    ]);
    expect(await markersUnder(dataDir)).toEqual([]);
    const log = await readFile(fileOf(dataDir, keyOf("s1", WS)), "utf8");
    expect(log).toContain('"message":{"@sealed":"');
    expect(log).toContain("stays in clear");
    expect(log).toContain('"label":"checkpoint"');
    expect(await readAll()).toEqual(before);
    // Without the keyring the content is not there to read.
    const bare = new JsonlEngine({ dataDir });
    const err = await bare.read(keyOf("s1", WS), 0, 10).catch((e: unknown) => e);
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    await bare.close();
  });

  it("running it twice is a no-op: the second run says sealed already and writes nothing", async () => {
    await writeClear();
    await sealSessions(options(), WS, ["s1", "s2"]);
    const file = fileOf(dataDir, keyOf("s1", WS));
    const st = await stat(file);
    const bytes = await readFile(file);
    const key = await readFile(keyPath(file));
    const again = await sealSessions(options(), WS, ["s1", "s2"]);
    expect(again.map((r) => r.result)).toEqual(["already", "already"]);
    expect((await stat(file)).ino).toBe(st.ino);
    expect(await readFile(file)).toEqual(bytes);
    expect(await readFile(keyPath(file))).toEqual(key);
  });

  it("a crash at any step leaves a readable session, never a sealed log without its key; a rerun finishes", async () => {
    await writeClear();
    const before = await readAll();
    const file = fileOf(dataDir, keyOf("s1", WS));
    let crashes = 0;
    for (let k = 1; ; k++) {
      const { fs, crashed } = crashingAt(k);
      const err = await sealSession(options(fs), keyOf("s1", WS)).catch((e: unknown) => e);
      if (!crashed()) {
        // Sealed by this run, or by the one that crashed after its rename.
        expect(["sealed", "already"]).toContain((err as { result: string }).result);
        break;
      }
      crashes++;
      // The crash: a sealed log is never there without its key file.
      const log = await readFile(file, "utf8");
      const keyThere = await stat(keyPath(file)).then(
        () => true,
        () => false,
      );
      if (log.includes('"@sealed"')) expect(keyThere).toBe(true);
      expect(await readAll()).toEqual(before);
      // Undo nothing: the next k starts from what this crash left (a key file, a copy).
    }
    expect(crashes).toBeGreaterThan(5);
    expect(await readAll()).toEqual(before);
    const s1Markers = (await readFile(file, "utf8")).includes(MARKERS[1] as string);
    expect(s1Markers).toBe(false);
  });

  it("each crash point on a fresh session: the rerun seals it and reads stay the same", async () => {
    await writeClear();
    // The fault-free run's steps, counted.
    const probe = crashingAt(Number.POSITIVE_INFINITY);
    await sealSession(options(probe.fs), keyOf("s1", WS));
    const steps = probe.count();
    expect(steps).toBeGreaterThan(5);
    for (let k = 1; k <= steps; k++) {
      await removeDir(dataDir);
      await writeClear();
      const before = await readAll();
      const { fs, crashed } = crashingAt(k);
      await sealSession(options(fs), keyOf("s1", WS)).catch(() => undefined);
      expect(crashed()).toBe(true);
      expect(await readAll()).toEqual(before);
      const rerun = await sealSession(options(), keyOf("s1", WS));
      // "already" when the crash came after the rename (the directory fsync).
      expect(["sealed", "already"]).toContain(rerun.result);
      expect(await readAll()).toEqual(before);
      expect(await readFile(fileOf(dataDir, keyOf("s1", WS)), "utf8")).not.toContain(MARKERS[1]);
    }
  });

  it("another engine that has the session open seals its next append after the rewrite (one retry)", async () => {
    await writeClear();
    const server = new JsonlEngine({ dataDir, encryption: { keys: keyring, workspaces: [] } });
    const store = new SessionStore(server);
    const s = await store.open(WS, "s2");
    await s.entries();
    await sealSession(options(), keyOf("s2", WS));
    const late = "SEALME-LATE-APPEND-77aa";
    const append = () => s.append([user("v2", `late ${late}`)]);
    const first = await append().catch((e: unknown) => e);
    if (first instanceof Error) {
      expect(isSessiondError(first, "UNAVAILABLE")).toBe(true);
      await append();
    }
    await store.close();
    const log = await readFile(fileOf(dataDir, keyOf("s2", WS)), "utf8");
    expect(log).not.toContain(late);
    const e = reader();
    expect(await textsOf(e, "s2")).toContain(late);
    await e.close();
  });

  it("refuses a session whose records are sealed but whose key file is gone (a new key would not open them)", async () => {
    await writeClear();
    await sealSession(options(), keyOf("s1", WS));
    const { unlink } = await import("node:fs/promises");
    await unlink(keyPath(fileOf(dataDir, keyOf("s1", WS))));
    const err = await sealSession(options(), keyOf("s1", WS)).catch((e: unknown) => e);
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    expect((err as Error).message).toMatch(/sealed records but no key file/);
    const unknown = await sealSession(options(), keyOf("nope", WS)).catch((e: unknown) => e);
    expect(isSessiondError(unknown, "NOT_FOUND")).toBe(true);
  });
});

/**
 * A file system that "crashes" (throws, and fails every later call) at
 * its k-th mutating call: open for writing, write (half of it written),
 * fsync, fdatasync, link, rename, unlink, mkdir. What was done before stays on disk, as after a
 * kill -9 (no fsync is skipped, so nothing is lost that a power cut would
 * keep: this is the process-crash case).
 */
function crashingAt(k: number): { fs: FsOps; crashed: () => boolean; count: () => number } {
  let n = 0;
  let dead = false;
  const step = () => {
    if (dead) throw new Error("crashed earlier");
    n++;
    if (n === k) {
      dead = true;
      throw new Error(`crash at step ${k}`);
    }
  };
  const rename = nodeFs.rename as NonNullable<FsOps["rename"]>;
  const fs: FsOps = {
    ...nodeFs,
    open: async (p, flags, mode) => {
      if (flags !== "r") step();
      return nodeFs.open(p, flags, mode);
    },
    write: async (fd, buf, offset, length, position) => {
      try {
        step();
      } catch (err) {
        // Killed in the middle of a write: half of it is in the file.
        if (!(err instanceof Error && err.message.startsWith("crash at"))) throw err;
        await nodeFs.write(fd, buf, offset, Math.max(1, Math.floor(length / 2)), position);
        throw err;
      }
      return nodeFs.write(fd, buf, offset, length, position);
    },
    fsync: async (fd) => {
      step();
      return nodeFs.fsync(fd);
    },
    fdatasync: async (fd) => {
      step();
      return nodeFs.fdatasync(fd);
    },
    link: async (a, b) => {
      step();
      return nodeFs.link(a, b);
    },
    rename: async (a, b) => {
      step();
      return rename(a, b);
    },
    unlink: async (p) => {
      step();
      return nodeFs.unlink(p);
    },
    mkdir: async (p) => {
      step();
      return nodeFs.mkdir(p);
    },
  };
  return { fs, crashed: () => dead, count: () => n };
}
