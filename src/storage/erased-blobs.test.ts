import { createHash } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { removeDir, tempDir } from "../../test/support/jsonl/fixtures.js";
import { SessionStore } from "../store/session-store.js";
import type { StorageEngine } from "./engine.js";
import { blobsReferencedBy, deleteErasedBlobs } from "./erased-blobs.js";
import { JsonlEngine } from "./jsonl/jsonl-engine.js";
import { LocalKeyring } from "./keys/local-keyring.js";
import { MemoryEngine } from "./memory.js";

/**
 * Erasing a session deletes every blob no other live session of the
 * workspace references (SPEC §12), and keeps the ones another session
 * still uses, on memory, JSONL in clear and JSONL sealed.
 */

const WS = "team";
const KB = 1024;
const ONLY = `ONLY-S1-BLOB-MARKER-${"a".repeat(70 * KB)}`;
const SHARED = `SHARED-BLOB-MARKER-${"b".repeat(70 * KB)}`;
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function message(id: string, texts: string[]): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: {
        role: Role.USER,
        content: texts.map((t) => ({ part: { case: "text" as const, value: t } })),
      },
    },
  });
}

let dataDir: string;
let keyDir: string;

beforeEach(async () => {
  dataDir = await tempDir();
  keyDir = await tempDir("sessiond-keys-");
});
afterEach(async () => {
  await removeDir(dataDir);
  await removeDir(keyDir);
});

const engines: Record<string, () => Promise<StorageEngine>> = {
  memory: async () => new MemoryEngine(),
  "jsonl (clear)": async () => new JsonlEngine({ dataDir }),
  "jsonl (sealed)": async () => {
    const keys = await LocalKeyring.open(path.join(keyDir, "k.json"), { create: true });
    const engine = new JsonlEngine({ dataDir, encryption: { keys, workspaces: [WS] } });
    if (!engine.blobs.seals(WS)) throw new Error("the engine does not seal its blobs");
    return engine;
  },
};

async function markerFiles(): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dataDir, { recursive: true })) {
    const file = path.join(dataDir, name);
    if ((await stat(file)).isFile() && (await readFile(file)).includes("ONLY-S1-BLOB-MARKER")) {
      out.push(name);
    }
  }
  return out;
}

describe.each(Object.keys(engines))(
  "erasure deletes the blobs only the erased sessions used, on %s",
  (name) => {
    it("a blob only the erased session referenced is gone; one another session references stays and reads", async () => {
      const engine = await (engines[name] as () => Promise<StorageEngine>)();
      const store = new SessionStore(engine, { limits: { blobThresholdBytes: 64 * KB } });
      await store.create({ workspace: WS, sessionId: "s1" });
      await store.create({ workspace: WS, sessionId: "s2" });
      await (await store.open(WS, "s1")).append(message("m1", [ONLY, SHARED]));
      await (await store.open(WS, "s2")).append(message("m2", [SHARED]));
      expect(await engine.blobs.stat(WS, sha(ONLY), false)).toBeDefined();

      const candidates = await blobsReferencedBy(engine, WS, ["s1"]);
      expect([...candidates].sort()).toEqual([sha(ONLY), sha(SHARED)].sort());
      await store.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo", why: "request" });

      // Used within the margin (an append in flight elsewhere may reference it): kept for the collector.
      const recent = await deleteErasedBlobs(engine, WS, candidates, Date.now() - 60_000);
      expect(recent.removed).toEqual([]);
      expect(await engine.blobs.stat(WS, sha(ONLY), false)).toBeDefined();

      const r = await deleteErasedBlobs(engine, WS, candidates, Date.now() + 1000);
      expect(r).toEqual({ removed: [sha(ONLY)], kept: [sha(SHARED)] });
      expect(await engine.blobs.stat(WS, sha(ONLY), false)).toBeUndefined();
      expect(await engine.blobs.stat(WS, sha(SHARED), false)).toBe(SHARED.length);
      const s2 = (await (await store.open(WS, "s2")).entries(0, 10)).entries;
      expect(s2.some((e) => e.id === "m2")).toBe(true);
      if (name !== "memory") expect(await markerFiles()).toEqual([]);
      await store.close();
    });

    it("store.erase itself deletes them once they are a minute old, and leaves fresh ones to the collection", async () => {
      const engine = await (engines[name] as () => Promise<StorageEngine>)();
      // The store's clock runs two minutes ahead: the blobs just written count as a minute old.
      const later = new SessionStore(engine, {
        limits: { blobThresholdBytes: 64 * KB },
        now: () => new Date(Date.now() + 120_000),
      });
      for (const id of ["s1", "s2", "s3"]) await later.create({ workspace: WS, sessionId: id });
      await (await later.open(WS, "s1")).append(message("m1", [ONLY, SHARED]));
      await (await later.open(WS, "s2")).append(message("m2", [SHARED]));
      await later.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo", why: "request" });
      expect(await engine.blobs.stat(WS, sha(ONLY), false)).toBeUndefined();
      expect(await engine.blobs.stat(WS, sha(SHARED), false)).toBe(SHARED.length);
      if (name !== "memory") expect(await markerFiles()).toEqual([]);

      const fresh = `FRESH-BLOB-${"c".repeat(70 * KB)}`;
      const now = new SessionStore(engine, { limits: { blobThresholdBytes: 64 * KB } });
      await (await now.open(WS, "s3")).append(message("m3", [fresh]));
      await now.erase({ workspace: WS, sessionIds: ["s3"], by: "dpo", why: "request" });
      expect(await engine.blobs.stat(WS, sha(fresh), false)).toBe(fresh.length);
      await now.close();
    });
  },
);
