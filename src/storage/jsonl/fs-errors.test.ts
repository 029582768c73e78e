import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, expectCode, rootEntry, user } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { errno, instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { freeze } from "../../../test/support/jsonl/unwritable-dir.js";
import { JsonlEngine } from "./jsonl-engine.js";

/**
 * A file-system error that a retry cannot fix is answered with a code
 * clients do not retry (FAILED_PRECONDITION for a data dir the operator
 * must fix, RESOURCE_EXHAUSTED for a full disk); only a transient or
 * unknown outcome is UNAVAILABLE. Messages name the path inside the data
 * dir, never the host path.
 */
describe("file-system errors as codes", () => {
  let dataDir: string;
  const k = keyOf("victim");
  const thaws: (() => void)[] = [];
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(async () => {
    for (const thaw of thaws.splice(0)) thaw();
    await removeDir(dataDir);
  });

  /** An fs error as node raises it for a call on `p`. */
  const errnoOn = (code: string, p: string) => Object.assign(errno(code), { path: p });

  async function seeded(): Promise<void> {
    await withEngine(dataDir, (e) => e.create(k, [rootEntry(k.sessionId)]));
  }

  it("an append whose file cannot be opened (EACCES) answers FAILED_PRECONDITION, not a retryable UNAVAILABLE", async () => {
    await seeded();
    const fs = instrumentedFs();
    fs.hooks.open = (p: string) => {
      if (p.endsWith(".jsonl")) throw errnoOn("EACCES", p);
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      const err = await expectCode(engine.append(k, appendOf([user("m")])), "FAILED_PRECONDITION");
      expect(err.message).toContain("permission denied (EACCES on default/sessions/victim.jsonl)");
      expect(err.message).not.toContain(dataDir);
    } finally {
      await engine.close();
    }
  });

  it("an append that runs out of space (ENOSPC) answers RESOURCE_EXHAUSTED and still says outcome unknown", async () => {
    await seeded();
    const fs = instrumentedFs();
    fs.hooks.write = () => {
      throw errno("ENOSPC");
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      const err = await expectCode(engine.append(k, appendOf([user("m")])), "RESOURCE_EXHAUSTED");
      expect(err.message).toContain("no space left on the device (ENOSPC)");
      expect(err.message).toContain("outcome unknown");
    } finally {
      await engine.close();
    }
  });

  it("a create that runs out of space (ENOSPC) answers RESOURCE_EXHAUSTED; once space is back it succeeds", async () => {
    const fs = instrumentedFs();
    fs.hooks.write = () => {
      throw errno("ENOSPC");
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      await expectCode(engine.create(k, [rootEntry(k.sessionId)]), "RESOURCE_EXHAUSTED");
      fs.hooks.write = undefined;
      await engine.create(k, [rootEntry(k.sessionId)]);
      expect((await engine.load(k)).headSeq).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it("a create in a workspace whose directory is a file (ENOTDIR) answers FAILED_PRECONDITION naming it inside the data dir", async () => {
    writeFileSync(path.join(dataDir, "default"), "");
    const engine = new JsonlEngine({ dataDir });
    try {
      const err = await expectCode(
        engine.create(k, [rootEntry(k.sessionId)]),
        "FAILED_PRECONDITION",
      );
      expect(err.message).toMatch(/\(ENOTDIR on default\/sessions[^)]*\)/);
      expect(err.message).toContain("data directory must be fixed");
      expect(err.message).not.toContain(dataDir);
    } finally {
      await engine.close();
    }
  });

  it("an append whose lock cannot be made (unwritable sessions dir) answers FAILED_PRECONDITION", async (t) => {
    await seeded();
    const dir = path.dirname(fileOf(dataDir, k));
    const frozen = freeze(dir);
    if (frozen === undefined) return t.skip("cannot make a directory unwritable here (chattr)");
    thaws.push(frozen.thaw);
    const engine = new JsonlEngine({ dataDir });
    try {
      const err = await expectCode(engine.append(k, appendOf([user("m")])), "FAILED_PRECONDITION");
      expect(err.message).toContain(`${frozen.errno} on default/sessions/.victim.jsonl.lock`);
    } finally {
      await engine.close();
    }
  });

  it("an I/O error (EIO) stays UNAVAILABLE: the outcome is unknown and a retry can succeed", async () => {
    await seeded();
    const fs = instrumentedFs();
    fs.hooks.write = () => {
      fs.hooks.write = undefined;
      throw errno("EIO");
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      await expectCode(engine.append(k, appendOf([user("m")])), "UNAVAILABLE");
      expect((await engine.append(k, appendOf([user("m")]))).headSeq).toBe(2);
    } finally {
      await engine.close();
    }
  });

  it("too many open files (EMFILE) is UNAVAILABLE: descriptors free up as other calls finish", async () => {
    await seeded();
    const fs = instrumentedFs();
    fs.hooks.open = (p: string) => {
      if (p.endsWith(".jsonl")) throw errnoOn("EMFILE", p);
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      await expectCode(engine.load(k), "UNAVAILABLE");
    } finally {
      await engine.close();
    }
  });

  it("a listing of a workspace whose sessions dir cannot be read answers FAILED_PRECONDITION", async () => {
    mkdirSync(path.join(dataDir, "default", "sessions"), { recursive: true });
    const fs = instrumentedFs();
    fs.hooks.readdir = (p: string) => {
      throw errnoOn("EACCES", p);
    };
    const engine = new JsonlEngine({ dataDir, fs: fs.ops });
    try {
      const err = await expectCode(engine.listIds("default"), "FAILED_PRECONDITION");
      expect(err.message).toContain("EACCES on default/sessions");
    } finally {
      await engine.close();
    }
  });
});
