/**
 * `sessiond copy` carries blobs (issue 36): a session whose parts are blobs
 * is copied with them, so that the target answers it whole; a blob two
 * sessions share is copied once; a source blob that does not hash to its
 * name fails the session instead of spreading.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { copySessions } from "../../src/cli/copy-sessions.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { SessionStore } from "../../src/store/session-store.js";
import { removeDataDir } from "../harness/server.js";

const dirs: string[] = [];
const engines: JsonlEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const d of dirs.splice(0)) await removeDataDir(d);
});

function engine(dir: string): JsonlEngine {
  const e = new JsonlEngine({ dataDir: dir });
  engines.push(e);
  return e;
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "sessiond-copy-blobs-"));
  dirs.push(d);
  return d;
}

const shot = new Uint8Array(300 * 1024).map((_, i) => (i * 31 + (i >> 8)) & 0xff);
const sha = createHash("sha256").update(shot).digest("hex");

async function sourceWithBlobs(dir: string): Promise<void> {
  const store = new SessionStore(engine(dir));
  for (const id of ["one", "two"]) {
    await store.create({ sessionId: id });
    const s = await store.open(undefined, id);
    await s.append({
      id: `${id}-shot`,
      kind: {
        case: "message",
        value: {
          role: Role.USER,
          content: [{ part: { case: "image", value: { mimeType: "image/png", data: shot } } }],
        },
      },
    });
  }
}

describe("sessiond copy with blobs", () => {
  it("copies the blobs a session references, once, and the target reads them whole", async () => {
    const src = tempDir();
    const dst = tempDir();
    await sourceWithBlobs(src);
    const summary = await copySessions({
      source: engine(src),
      target: engine(dst),
      verifier: engine(dst),
    });
    expect(summary.copied).toBe(2);
    expect(summary.failed).toBe(0);
    const target = engine(dst);
    expect((await target.blobs.list("default")).map((b) => b.sha256)).toEqual([sha]);
    const data = await target.blobs.read("default", sha, 0, shot.length);
    expect(Buffer.compare(data, shot)).toBe(0);
  });

  it("fails a session whose source blob does not hash to its name, and copies nothing of it", async () => {
    const src = tempDir();
    const dst = tempDir();
    await sourceWithBlobs(src);
    // Damage the source blob in place.
    const shard = join(src, "default", "blobs", sha.slice(0, 2));
    writeFileSync(join(shard, sha), Buffer.alloc(shot.length, 7));
    const summary = await copySessions({
      source: engine(src),
      target: engine(dst),
      verifier: engine(dst),
    });
    expect(summary.failed).toBe(2);
    expect(summary.copied).toBe(0);
    expect(
      readdirSync(dst).includes("default") ? await engine(dst).blobs.list("default") : [],
    ).toEqual([]);
  });
});
