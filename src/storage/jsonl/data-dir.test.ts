import { mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rootEntry } from "../../../test/support/fixtures.js";
import { fileOf, keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { freeze, fullDisk, IS_ROOT } from "../../../test/support/jsonl/unwritable-dir.js";
import { isSessiondError, type SessiondError } from "../../core/errors.js";
import { openStore } from "../../index.js";
import { checkDataDir } from "./data-dir.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { tempName } from "./paths.js";

/**
 * A data dir the engine cannot use is refused when the engine is made, with
 * a non-retryable SessiondError, instead of a store that accepts the
 * directory and then fails every create with UNAVAILABLE.
 */

/** The SessiondError `fn` throws (the test fails when it throws nothing or something else). */
function refusal(fn: () => unknown): SessiondError {
  try {
    fn();
  } catch (err) {
    if (isSessiondError(err)) return err;
    throw err;
  }
  return expect.fail("expected a SessiondError, nothing was thrown");
}

describe("the data dir check at open", () => {
  let base: string;
  const thaws: (() => void)[] = [];
  beforeEach(async () => {
    base = await tempDir("sessiond-datadir-");
  });
  afterEach(async () => {
    for (const thaw of thaws.splice(0)) thaw();
    await removeDir(base);
  });

  it("a data dir that is a file is refused with FAILED_PRECONDITION: not a directory", () => {
    const file = path.join(base, "a-file");
    writeFileSync(file, "not a directory\n");
    const err = refusal(() => new JsonlEngine({ dataDir: file }));
    expect(err.code).toBe("FAILED_PRECONDITION");
    expect(err.message).toBe(`data directory ${file} is not a directory`);
  });

  it("openStore refuses a data dir that is a file with a SessiondError, not a store that fails later", () => {
    const file = path.join(base, "a-file");
    writeFileSync(file, "");
    const err = refusal(() => openStore({ dataDir: file }));
    expect(err.code).toBe("FAILED_PRECONDITION");
  });

  it("a data dir below a file (ENOTDIR) is refused, naming the file in the way", () => {
    const file = path.join(base, "a-file");
    writeFileSync(file, "");
    const err = refusal(() => new JsonlEngine({ dataDir: path.join(file, "data") }));
    expect(err.code).toBe("FAILED_PRECONDITION");
    expect(err.message).toContain(`${file} is not a directory`);
  });

  it("a missing data dir is created at open, with its missing parents", () => {
    const dir = path.join(base, "new", "data");
    new JsonlEngine({ dataDir: dir });
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it("the probe leaves nothing behind in a data dir it accepts", () => {
    new JsonlEngine({ dataDir: base });
    expect(readdirSync(base)).toEqual([]);
  });

  it("a data dir that cannot be written to is refused with FAILED_PRECONDITION", async (t) => {
    const dir = path.join(base, "frozen");
    mkdirSync(dir);
    const frozen = freeze(dir);
    if (frozen === undefined) return t.skip("cannot make a directory unwritable here (chattr)");
    thaws.push(frozen.thaw);
    const err = refusal(() => new JsonlEngine({ dataDir: dir }));
    expect(err.code).toBe("FAILED_PRECONDITION");
    expect(err.message).toContain(`data directory ${dir} cannot be written to`);
    expect(err.message).toContain(frozen.errno);
  });

  it("a data dir whose parent cannot be written to cannot be created: FAILED_PRECONDITION", async (t) => {
    const parent = path.join(base, "frozen");
    mkdirSync(parent);
    const frozen = freeze(parent);
    if (frozen === undefined) return t.skip("cannot make a directory unwritable here (chattr)");
    thaws.push(frozen.thaw);
    const err = refusal(() => new JsonlEngine({ dataDir: path.join(parent, "data") }));
    expect(err.code).toBe("FAILED_PRECONDITION");
    expect(err.message).toContain("cannot be created");
  });

  it("a data dir on a full disk is refused with RESOURCE_EXHAUSTED (ENOSPC)", async (t) => {
    const dir = path.join(base, "full");
    mkdirSync(dir);
    const disk = fullDisk(dir);
    if (disk === undefined) {
      return t.skip(IS_ROOT ? "mount -t tmpfs is not allowed here" : "needs root (mount)");
    }
    thaws.push(disk.unmount);
    const err = refusal(() => new JsonlEngine({ dataDir: dir }));
    expect(err.code).toBe("RESOURCE_EXHAUSTED");
    expect(err.message).toContain("no space left on the device (ENOSPC)");
  });

  it('a data dir opened "readable" is not created when missing: FAILED_PRECONDITION does not exist', () => {
    const dir = path.join(base, "missing");
    const err = refusal(() => checkDataDir(dir, "readable"));
    expect(err.code).toBe("FAILED_PRECONDITION");
    expect(err.message).toBe(`data directory ${dir} does not exist`);
  });

  it('an unwritable data dir can still be opened "readable" and its sessions read', async (t) => {
    const dir = path.join(base, "snapshot");
    const k = keyOf("kept");
    const writer = new JsonlEngine({ dataDir: dir });
    await writer.create(k, [rootEntry(k.sessionId)]);
    await writer.close();
    const frozen = freeze(dir);
    if (frozen === undefined) return t.skip("cannot make a directory unwritable here (chattr)");
    thaws.push(frozen.thaw);
    const reader = new JsonlEngine({ dataDir: dir, need: "readable" });
    try {
      expect((await reader.load(k)).headSeq).toBe(1);
    } finally {
      await reader.close();
    }
  });

  it("a reader lists a read-only snapshot holding a crashed create's temp file instead of failing to remove it", async (t) => {
    const dir = path.join(base, "snapshot");
    const k = keyOf("kept");
    const writer = new JsonlEngine({ dataDir: dir });
    await writer.create(k, [rootEntry(k.sessionId)]);
    await writer.close();
    const sessions = path.dirname(fileOf(dir, k));
    const temp = path.join(sessions, tempName("crashed", "0123abcd"));
    writeFileSync(temp, "");
    utimesSync(temp, new Date(0), new Date(0));
    const frozen = freeze(sessions);
    if (frozen === undefined) return t.skip("cannot make a directory unwritable here (chattr)");
    thaws.push(frozen.thaw);
    const reader = new JsonlEngine({ dataDir: dir, need: "readable" });
    try {
      expect(await reader.listIds(k.workspace)).toEqual([k.sessionId]);
    } finally {
      await reader.close();
    }
  });
});
