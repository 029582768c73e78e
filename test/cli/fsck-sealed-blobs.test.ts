/**
 * `sessiond fsck` and sealed blobs (issue 41): a workspace sealed after a
 * session in clear was made keeps sealing that session's new blobs
 * (`<sha256>.sealed`), whose references stay in clear. fsck, which takes no
 * keys, checks such a blob by its size (its hash needs the key): present
 * with the referenced size is ok, a cut file is bad, never "missing".
 */
import { createHash } from "node:crypto";
import { mkdtempSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { LocalKeyring } from "../../src/storage/keys/local-keyring.js";
import { SessionStore } from "../../src/store/session-store.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir } from "../harness/server.js";

const WS = "team";
const text = "a long tool output line\n".repeat(5000); // 120 KB: a blob
const sha = createHash("sha256").update(text).digest("hex");
let dir: string;
let keyDir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-fsck-sealed-"));
  keyDir = mkdtempSync(join(tmpdir(), "sessiond-fsck-keys-"));
  const clear = new SessionStore(new JsonlEngine({ dataDir: dir }));
  await clear.create({ workspace: WS, sessionId: "old" });
  await clear.close();
  const keys = await LocalKeyring.open(join(keyDir, "keyring.json"), { create: true });
  const sealed = new SessionStore(
    new JsonlEngine({ dataDir: dir, encryption: { keys, workspaces: [WS] } }),
  );
  const s = await sealed.open(WS, "old");
  await s.append({
    id: "out",
    kind: {
      case: "message",
      value: { role: Role.USER, content: [{ part: { case: "text", value: text } }] },
    },
  });
  await sealed.close();
});
afterAll(() => {
  removeDataDir(dir);
  removeDataDir(keyDir);
});

const sealedFile = () => join(dir, WS, "blobs", sha.slice(0, 2), `${sha}.sealed`);

describe("sessiond fsck and sealed blobs", () => {
  it("counts a sealed blob of the referenced size as ok, without keys", async () => {
    const r = await runCli(["fsck", "--data-dir", dir]);
    expect(r.stdout).toContain("1 referenced blobs: 1 ok, 0 missing, 0 bad");
    expect(r.code).toBe(0);
  });

  it("names a cut sealed blob as bad, not missing", async () => {
    truncateSync(sealedFile(), 1000);
    const r = await runCli(["fsck", "--data-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BAD BLOB`);
    expect(r.stdout).toContain(`${WS}/${sha}  (sealed:`);
    expect(r.stdout).toContain("1 referenced blobs: 0 ok, 0 missing, 1 bad");
  });
});
