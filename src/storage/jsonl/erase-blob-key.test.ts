import { createHash } from "node:crypto";
import { copyFile, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { user } from "../../../test/support/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * Erasing a whole workspace destroys its blob key (SPEC §12): the key file
 * keeps no key material, the sealed blobs are removed, and a sealed blob
 * file kept from before (a copy, a crash) no longer opens with the
 * keyring. New sealed blobs then get a new key.
 */

const WS = "vault";
const MARK = "ERASE-BLOBKEY-MARKER-6b0d";

function blobOf(seed: string): { data: Buffer; sha256: string } {
  const data = Buffer.from(`${MARK} ${seed} `.repeat(3000));
  return { data, sha256: createHash("sha256").update(data).digest("hex") };
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

describe("erasing a whole JSONL workspace destroys its blob key", () => {
  let dir: string;
  let keys: LocalKeyring;
  let engine: JsonlEngine;
  let store: SessionStore;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "sessiond-erase-blobkey-"));
    keys = await LocalKeyring.open(path.join(dir, "keyring.json"), { create: true });
    engine = new JsonlEngine({
      dataDir: path.join(dir, "data"),
      encryption: { keys, workspaces: [WS] },
    });
    store = new SessionStore(engine);
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the key file becomes a tombstone, the sealed blobs go, a kept copy does not open; new blobs get a new key", async () => {
    await store.create({ workspace: WS, sessionId: "s1" });
    await (await store.open(WS, "s1")).append([user("u1", "hello")]);
    const blob = blobOf("one");
    await engine.blobs.put(WS, blob.sha256, blob.data);
    const blobDir = path.join(dir, "data", WS, "blobs");
    const sealedFile = path.join(blobDir, blob.sha256.slice(0, 2), `${blob.sha256}.sealed`);
    const keyText = await readFile(path.join(blobDir, "blobs.key"), "utf8");
    const wrapped = (JSON.parse(keyText) as { wrapped: string }).wrapped;
    const kept = path.join(dir, "kept.sealed");
    await copyFile(sealedFile, kept);

    await store.erase({ workspace: WS, all: true, by: "dpo", why: "account closed" });

    const tomb = JSON.parse(await readFile(path.join(blobDir, "blobs.key"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(tomb.destroyed).toBeDefined();
    expect(tomb.wrapped).toBeUndefined();
    const files = await filesUnder(path.join(dir, "data"));
    expect(files.filter((f) => f.endsWith(".sealed"))).toEqual([]);
    for (const f of files) {
      const bytes = await readFile(f);
      expect(bytes.includes(MARK)).toBe(false);
      expect(bytes.includes(wrapped)).toBe(false);
    }

    // A copy of the sealed blob put back (a backup, a crash) does not open: its key is gone.
    await copyFile(kept, sealedFile);
    const fresh = new JsonlEngine({
      dataDir: path.join(dir, "data"),
      encryption: { keys, workspaces: [WS] },
    });
    const err = await fresh.blobs.read(WS, blob.sha256, 0, 100).catch((e: unknown) => e);
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    expect(String(err)).toContain("were erased");

    // The workspace goes on: a new sealed blob gets a new key (the stale file is removed first).
    const next = blobOf("two");
    await fresh.blobs.put(WS, next.sha256, next.data);
    const got = await fresh.blobs.read(WS, next.sha256, 0, next.data.length);
    expect(Buffer.from(got).equals(next.data)).toBe(true);
    const newKey = JSON.parse(await readFile(path.join(blobDir, "blobs.key"), "utf8")) as {
      wrapped?: string;
    };
    expect(newKey.wrapped).toBeDefined();
    expect(newKey.wrapped).not.toBe(wrapped);
    expect(await fresh.blobs.stat(WS, blob.sha256, false)).toBeUndefined();
    await fresh.close();
  });

  it("erasing some sessions (not the workspace) keeps the blob key", async () => {
    await store.create({ workspace: WS, sessionId: "s1" });
    const blob = blobOf("three");
    await engine.blobs.put(WS, blob.sha256, blob.data);
    await store.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo" });
    const key = JSON.parse(
      await readFile(path.join(dir, "data", WS, "blobs", "blobs.key"), "utf8"),
    ) as { wrapped?: string };
    expect(key.wrapped).toBeDefined();
    const got = await engine.blobs.read(WS, blob.sha256, 0, 10);
    expect(Buffer.from(got).toString()).toBe(blob.data.subarray(0, 10).toString());
  });
});
