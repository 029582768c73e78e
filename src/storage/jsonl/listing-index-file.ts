import { randomBytes } from "node:crypto";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { errnoCode } from "./fs-ops.js";
import { decodeIndex, encodeIndex } from "./listing-index-codec.js";
import type { LoadedFile, SavedFile } from "./listing-index-entries.js";

/**
 * The persisted listing index of one workspace, as a file:
 * `<dataDir>/<workspace>/listing-index.bin`. It keeps, per session file,
 * what a listing needs and would otherwise read every file for after a
 * restart: the root (first line) and the listing record (counters, title,
 * folded tags), each with the stat key it was true for (file-identity.ts).
 *
 * It is a cache: the session files stay the truth. Every entry is checked
 * against a stat of its file before it is used (listing-index.ts), a file
 * that is missing, cut, damaged (CRC), of another version or not what this
 * code writes counts as empty, and the next listing reads the session
 * files and writes it again. So it needs no fsync: a crash or power cut
 * can at worst lose or age it, never make a listing wrong. It is written
 * to a temp file and renamed over the old one, so a reader sees a whole
 * file or the previous one, and two processes on one data dir can both
 * write it (the last rename wins; both contents are true of their time).
 */

export const LISTING_INDEX_NAME = "listing-index.bin";
const TEMP_PREFIX = ".listing-index-";
/** A temp file older than this is a crashed writer's (a write takes milliseconds). */
const TEMP_GRACE_MS = 60_000;

/** The file operations the index uses (injectable: tests fail them). */
export interface ListingIndexIo {
  readFile(p: string): Promise<Buffer>;
  writeFile(p: string, data: Buffer): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(p: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  mtimeMs(p: string): Promise<number>;
}

const nodeIo: ListingIndexIo = {
  readFile: (p) => fsp.readFile(p),
  writeFile: (p, data) => fsp.writeFile(p, data, { flag: "wx" }),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (p) => fsp.unlink(p),
  readdir: (dir) => fsp.readdir(dir),
  mtimeMs: async (p) => (await fsp.stat(p)).mtimeMs,
};

/** Reads and writes the index files of a data dir. */
export class ListingIndexFile {
  constructor(
    private readonly dataDir: string,
    private readonly io: ListingIndexIo = nodeIo,
  ) {}

  /** The index file of `workspace` (a checked name: paths.ts built its session dirs first). */
  pathOf(workspace: string): string {
    return path.join(this.dataDir, workspace, LISTING_INDEX_NAME);
  }

  /**
   * The files the index of `workspace` holds: empty when there is no index
   * or it is not one this code wrote whole. Never throws.
   */
  async load(workspace: string): Promise<LoadedFile[]> {
    let bytes: Buffer;
    try {
      bytes = await this.io.readFile(this.pathOf(workspace));
    } catch {
      return [];
    }
    return decodeIndex(bytes, workspace) ?? [];
  }

  /** Writes the index of `workspace` (temp file, then rename over the old one). */
  async save(workspace: string, files: readonly SavedFile[]): Promise<void> {
    const target = this.pathOf(workspace);
    const temp = path.join(
      path.dirname(target),
      `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}.tmp`,
    );
    await this.io.writeFile(temp, encodeIndex(files));
    try {
      await this.io.rename(temp, target);
    } catch (err) {
      await this.io.unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  /** Removes temp files of writers that crashed mid-save. Never throws. */
  async removeStaleTemps(workspace: string, now = Date.now()): Promise<void> {
    const dir = path.dirname(this.pathOf(workspace));
    let names: string[];
    try {
      names = await this.io.readdir(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const p = path.join(dir, name);
      try {
        if (now - (await this.io.mtimeMs(p)) >= TEMP_GRACE_MS) await this.io.unlink(p);
      } catch (err) {
        // Gone already (another process cleaned it): nothing to do; anything else: next time.
        if (errnoCode(err) !== "ENOENT") return;
      }
    }
  }
}
