import { createHash } from "node:crypto";
import { readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { BlobFiles } from "./blob-files.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { rewrapBlobs, sealBlobs } from "./seal-sessions.js";

/**
 * Sealed blobs (SPEC §12): in a sealed workspace, blobs are stored sealed
 * under the workspace's blob data key, still named (and deduplicated, and
 * read) by the SHA-256 of their plaintext.
 */

const WS = "team";
const MARKER = "BLOBMARKER-9d41-ZULU";
const KB = 1024;

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

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const sealing = () => new BlobFiles(nodeFs, dataDir, true, { keys: keyring, workspaces: [WS] });

/** 200 KiB (four segments), the marker at a segment boundary and in the last one. */
function content(): Buffer {
  const b = Buffer.alloc(200 * KB, "abcdefgh");
  b.write(MARKER, 64 * KB - 5);
  b.write(MARKER, 199 * KB);
  return b;
}

async function filesWith(dir: string, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, name);
    if ((await stat(file)).isFile() && (await readFile(file)).includes(needle)) out.push(name);
  }
  return out;
}

async function readAll(b: BlobFiles, hash: string, size: number): Promise<Buffer> {
  return Buffer.from(await b.read(WS, hash, 0, size));
}

describe("sealed blobs (JSONL)", () => {
  it("a blob put in a sealed workspace holds no marker on disk; stat, list and reads (any range) give the plaintext", async () => {
    const data = content();
    const h = sha(data);
    const b = sealing();
    await b.put(WS, h, data);
    expect(await filesWith(dataDir, MARKER)).toEqual([]);
    const names = await readdir(path.join(dataDir, WS, "blobs"), { recursive: true });
    expect(names).toEqual(expect.arrayContaining(["blobs.key", `${h.slice(0, 2)}/${h}.sealed`]));
    expect(await b.stat(WS, h, false)).toBe(data.length);
    expect(await b.list(WS)).toEqual([
      { sha256: h, size: data.length, touchedMs: expect.any(Number), upload: false },
    ]);
    expect(await readAll(b, h, data.length)).toEqual(data);
    for (const [at, n] of [
      [0, 1],
      [64 * KB - 5, 30],
      [64 * KB, 64 * KB],
      [100, 150 * KB],
      [199 * KB, 10 * KB],
      [200 * KB, 5],
    ] as const) {
      expect(Buffer.from(await b.read(WS, h, at, n))).toEqual(data.subarray(at, at + n));
    }
    // Dedup: the same content again is the same blob (only touched).
    await b.put(WS, h, data);
    expect((await b.list(WS)).length).toBe(1);
    // Another process (a fresh BlobFiles) reads it with the keyring, not without.
    expect(await readAll(sealing(), h, data.length)).toEqual(data);
    const bare = new BlobFiles(nodeFs, dataDir, true);
    const err = await bare.read(WS, h, 0, 10).catch((e: unknown) => e);
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    expect((err as Error).message).toContain("no keyring is configured");
  });

  it("sealed bytes moved under another hash do not open (DATA_LOSS naming the blob); an empty blob round-trips", async () => {
    const b = sealing();
    const data = content();
    const h = sha(data);
    await b.put(WS, h, data);
    const other = sha("other");
    const dir = path.join(dataDir, WS, "blobs");
    await rename(
      path.join(dir, h.slice(0, 2), `${h}.sealed`),
      path.join(dir, h.slice(0, 2), `${other}.sealed`),
    );
    const moved = path.join(dir, other.slice(0, 2));
    if (moved !== path.join(dir, h.slice(0, 2))) {
      const { mkdir } = await import("node:fs/promises");
      await mkdir(moved, { recursive: true });
      await rename(
        path.join(dir, h.slice(0, 2), `${other}.sealed`),
        path.join(moved, `${other}.sealed`),
      );
    }
    const err = await b.read(WS, other, 0, 10).catch((e: unknown) => e);
    expect(isSessiondError(err, "DATA_LOSS")).toBe(true);
    expect((err as Error).message).toContain(`blob ${other}`);
    await b.put(WS, sha(""), new Uint8Array(0));
    expect(await b.stat(WS, sha(""), false)).toBe(0);
    expect((await b.read(WS, sha(""), 0, 10)).length).toBe(0);
  });

  it("a chunked upload is sealed chunk by chunk while it runs, and committed as a sealed blob", async () => {
    const b = sealing();
    const data = content();
    const h = sha(data);
    let at = 0;
    for (const n of [10 * KB, 90 * KB, 100 * KB]) {
      expect(await b.uploaded(WS, h)).toBe(at);
      at = await b.appendUpload(WS, h, at, data.subarray(at, at + n));
      expect(await filesWith(dataDir, MARKER)).toEqual([]);
    }
    expect(await b.uploaded(WS, h)).toBe(data.length);
    const ok = await b.commitUpload(WS, h, async (chunks) => {
      const hash = createHash("sha256");
      for await (const c of chunks) hash.update(c);
      return hash.digest("hex") === h;
    });
    expect(ok).toBe(true);
    expect(await b.uploaded(WS, h)).toBe(0);
    expect(await filesWith(dataDir, MARKER)).toEqual([]);
    expect(await readAll(b, h, data.length)).toEqual(data);
  });

  it("a workspace not sealed keeps its blobs in clear; sealBlobs seals them afterwards and they read the same", async () => {
    const data = content();
    const h = sha(data);
    await new BlobFiles(nodeFs, dataDir, true, { keys: keyring, workspaces: [] }).put(WS, h, data);
    expect(await filesWith(dataDir, MARKER)).toEqual([`${WS}/blobs/${h.slice(0, 2)}/${h}`]);
    expect(await sealBlobs({ dataDir, keys: keyring }, WS)).toBe(1);
    expect(await filesWith(dataDir, MARKER)).toEqual([]);
    expect(await readAll(sealing(), h, data.length)).toEqual(data);
    expect(await sealBlobs({ dataDir, keys: keyring }, WS)).toBe(0);
  });

  it("keys rewrap wraps the blob key under the current version: the old version can then go", async () => {
    const data = content();
    const h = sha(data);
    await sealing().put(WS, h, data);
    expect(await rewrapBlobs({ dataDir, keys: keyring }, WS)).toEqual({ from: 1, to: 1 });
    await keyring.rotate(WS);
    expect(await rewrapBlobs({ dataDir, keys: keyring }, WS)).toEqual({ from: 1, to: 2 });
    // Version 1 retired from the keyring file: the blob still opens (a fresh process).
    const file = path.join(keyDir, "keyring.json");
    const ring = JSON.parse(await readFile(file, "utf8"));
    delete ring.keys[WS].versions["1"];
    await writeFile(file, JSON.stringify(ring), { mode: 0o600 });
    keyring = await LocalKeyring.open(file);
    expect(await readAll(sealing(), h, data.length)).toEqual(data);
    expect(await rewrapBlobs({ dataDir, keys: keyring }, "nothing-sealed")).toBeUndefined();
  });

  it("through the store: a large part of a sealed session is a sealed blob; the entry reads back whole", async () => {
    const engine = new JsonlEngine({ dataDir, encryption: { keys: keyring, workspaces: [WS] } });
    expect(engine.blobs.seals(WS)).toBe(true); // the engine hands its encryption to its blobs
    const store = new SessionStore(engine, { limits: { blobThresholdBytes: 64 * KB } });
    await store.create({ workspace: WS, sessionId: "s1" });
    const s = await store.open(WS, "s1");
    const text = content().toString("latin1");
    await s.append(message("m1", text));
    expect(await filesWith(dataDir, MARKER)).toEqual([]);
    const read = (await s.entries(0, 10)).entries.find((e) => e.id === "m1");
    const part = read?.kind.case === "message" ? read.kind.value.content[0]?.part : undefined;
    expect(part?.case).toBe("blob");
    const chunks: Uint8Array[] = [];
    for await (const c of store.blobs.read(WS, sha(text), 0, 0)) chunks.push(c.data);
    expect(Buffer.concat(chunks).toString("latin1")).toBe(text);
    await store.close();
  });
});

function message(id: string, text: string): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
}
