/**
 * The temp dirs of a vitest file on sealed JSONL sessions (imports vitest:
 * for test files only).
 */
import * as path from "node:path";
import { afterEach, beforeEach } from "vitest";
import { LocalKeyring } from "../../../src/storage/keys/local-keyring.js";
import { removeDir, tempDir } from "./fixtures.js";

/** A data dir, and a keyring in a dir of its own. */
export interface SealedTestDirs {
  dataDir: string;
  keyDir: string;
  keyring: LocalKeyring;
}

/**
 * Registers, for the calling test file, a fresh data dir and keyring
 * before each test and their removal after it; the object returned holds
 * those of the test running.
 */
export function sealedTestDirs(): SealedTestDirs {
  const dirs = {} as SealedTestDirs;
  beforeEach(async () => {
    dirs.dataDir = await tempDir();
    dirs.keyDir = await tempDir("sessiond-keys-");
    dirs.keyring = await LocalKeyring.open(path.join(dirs.keyDir, "keyring.json"), {
      create: true,
    });
  });
  afterEach(async () => {
    await removeDir(dirs.dataDir);
    await removeDir(dirs.keyDir);
  });
  return dirs;
}
