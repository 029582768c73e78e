import { readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectCode, rootEntry, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";

/**
 * A create is a temp file, fsynced, linked into place and the directory
 * fsynced. A crash leaves at most a temp file, which is never taken for a
 * session and is cleaned up; a create never overwrites an existing file.
 */
describe("create", () => {
  let dataDir: string;
  const k = keyOf("fresh");

  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("a temp file left by a crashed create is not a session and is cleaned on the first scan", async () => {
    await withEngine(dataDir, (e) => e.create(keyOf("other"), [rootEntry("other")]));
    const dir = path.dirname(fileOf(dataDir, k));
    const crashed = path.join(dir, ".tmp-fresh-0123456789ab");
    const inFlight = path.join(dir, ".tmp-fresh-ba9876543210");
    const root = Buffer.from('{"seq":1,"crc":"00000000","entry":{"id":"ro');
    await writeFile(crashed, root);
    await writeFile(inFlight, root);
    const old = new Date(Date.now() - 3_600_000);
    await utimes(crashed, old, old);

    await withEngine(dataDir, async (e) => {
      expect(await e.listIds("default")).toEqual(["other"]);
      await expectCode(e.load(k), "NOT_FOUND");
    });
    const names = await readdir(dir);
    expect(names).not.toContain(path.basename(crashed));
    expect(names, "a young temp file may be a create in flight elsewhere").toContain(
      path.basename(inFlight),
    );
  });

  it("create over an existing id fails with ALREADY_EXISTS and leaves the file unchanged", async () => {
    const file = fileOf(dataDir, k);
    await withEngine(dataDir, (e) => e.create(k, [rootEntry(k.sessionId, { title: "first" })]));
    const before = await readFile(file);
    const inode = (await stat(file)).ino;
    await withEngine(dataDir, async (e) => {
      await expectCode(
        e.create(k, [rootEntry(k.sessionId, { title: "second" })]),
        "ALREADY_EXISTS",
      );
      expect((await e.load(k)).title).toBe("first");
    });
    expect(await readFile(file)).toEqual(before);
    expect((await stat(file)).ino).toBe(inode);
    expect((await readdir(path.dirname(file))).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
  });

  it("an id taken by a subagent session cannot be created as a top-level one", async () => {
    const sub = rootEntry(k.sessionId, { parentSessionId: "parent-1", agentType: "explorer" });
    await withEngine(dataDir, async (e) => {
      await e.create(k, [sub]);
      await expectCode(e.create(k, [rootEntry(k.sessionId)]), "ALREADY_EXISTS");
    });
    await readFile(fileOf(dataDir, k, true));
  });

  it("fsyncs the new file and its directory, and creates missing directories durably", async () => {
    const fs = instrumentedFs();
    await withEngine(dataDir, (e) => e.create(k, [rootEntry(k.sessionId)]), { fs: fs.ops });
    // temp file, then the directories created (workspace, sessions) and the final link
    expect(fs.counts.fsync).toBeGreaterThanOrEqual(4);
    expect(fs.counts.link).toBe(1);
    expect(fs.counts.mkdir).toBe(2);
  });

  it("writes nothing for entries that do not form a valid log", async () => {
    await withEngine(dataDir, async (e) => {
      await expect(e.create(k, [user("not-a-root", "x", { seq: 1 })])).rejects.toThrow();
      expect(await e.listIds("default")).toEqual([]);
    });
  });
});
