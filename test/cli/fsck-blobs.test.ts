/**
 * `sessiond fsck` checks the blobs the sessions reference (issue 36): each
 * must be in its workspace, of its size, its content hashing to its name;
 * a missing or damaged one is a line naming it and the session that
 * references it, and exit 1.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { SessionStore } from "../../src/store/session-store.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir } from "../harness/server.js";

const text = "a long tool output line\n".repeat(5000); // 120 KB: a blob
const sha = createHash("sha256").update(text).digest("hex");
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-fsck-blobs-"));
  const engine = new JsonlEngine({ dataDir: dir });
  const store = new SessionStore(engine);
  await store.create({ sessionId: "holder" });
  const s = await store.open(undefined, "holder");
  await s.append({
    id: "out",
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
  await store.close();
});
afterAll(() => removeDataDir(dir));

const blobFile = () => join(dir, "default", "blobs", sha.slice(0, 2), sha);

describe("sessiond fsck and blobs", () => {
  it("says the referenced blobs are ok and exits 0", async () => {
    const r = await runCli(["fsck", "--data-dir", dir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("1 referenced blobs: 1 ok, 0 missing, 0 bad");
  });

  it("names a damaged blob and its session, exits 1", async () => {
    writeFileSync(blobFile(), Buffer.from(text.replace("long", "LONG")));
    const r = await runCli(["fsck", "--data-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `BAD BLOB\\s+default/${sha}  \\(its content hashes to [0-9a-f]{64}; referenced by session holder\\)`,
      ),
    );
    expect(r.stdout).toContain("1 referenced blobs: 0 ok, 0 missing, 1 bad");
  });

  it("names a missing blob, exits 1; --json gives one object for it", async () => {
    rmSync(blobFile());
    const r = await runCli(["fsck", "--data-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `MISSING BLOB  default/${sha}  (ENOENT; referenced by session holder)`,
    );
    const json = await runCli(["fsck", "--data-dir", dir, "--json"]);
    expect(json.code).toBe(1);
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.blob === sha)).toMatchObject({
      problem: "missing",
      sessionId: "holder",
    });
  });
});
