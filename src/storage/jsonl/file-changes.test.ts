import { appendFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { FileChanges } from "./file-changes.js";

/** The stamps of FileChanges: steady while a file is untouched, new once a change to it is reported. */

let dir: string;
beforeAll(async () => {
  dir = await tempDir("sessiond-file-changes-");
});
afterAll(() => removeDir(dir));

describe("FileChanges", () => {
  it("a file's stamp holds until a change to that file is reported", async () => {
    const a = path.join(dir, "a.jsonl");
    const b = path.join(dir, "b.jsonl");
    await writeFile(a, "1\n");
    await writeFile(b, "1\n");
    const changes = new FileChanges();
    try {
      const first = changes.stamp(dir, "a");
      expect(first).toBeDefined();
      const otherBefore = changes.stamp(dir, "b");
      await appendFile(a, "2\n");
      await expect.poll(() => changes.stamp(dir, "a"), { timeout: 5_000 }).not.toBe(first);
      expect(changes.stamp(dir, "b")).toBe(otherBefore);
    } finally {
      changes.close();
    }
  });

  it("a directory that cannot be watched gives no stamp", () => {
    const changes = new FileChanges();
    expect(changes.stamp(path.join(dir, "no-such-dir"), "x.jsonl")).toBeUndefined();
    changes.close();
  });

  it("a directory watched again after its watch ended matches none of its earlier stamps", async () => {
    const a = path.join(dir, "c.jsonl");
    await writeFile(a, "1\n");
    const changes = new FileChanges(1);
    const first = changes.stamp(dir, "c");
    // A second directory takes the only watch; the first one's next watch is new.
    expect(changes.stamp(tmpSibling(), "y")).toBeDefined();
    const second = changes.stamp(dir, "c");
    expect(second).not.toBe(first);
    changes.close();
    expect(changes.stamp(dir, "c")).not.toBe(second);
    changes.close();
  });
});

function tmpSibling(): string {
  return path.dirname(dir);
}
