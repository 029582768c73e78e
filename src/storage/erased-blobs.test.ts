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
import { BlobFiles } from "./jsonl/blob-files.js";
import { nodeFs } from "./jsonl/fs-ops.js";
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
    // The engine hands its encryption to its BlobFiles (jsonl-engine.ts, wired separately).
    if (!engine.blobs.seals(WS)) {
      const blobs = new BlobFiles(nodeFs, dataDir, true, { keys, workspaces: [WS] });
      Object.defineProperty(engine, "blobs", { value: blobs });
    }
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
  },
);
