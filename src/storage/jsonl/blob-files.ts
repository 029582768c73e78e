import { randomBytes } from "node:crypto";
import { utimesSync } from "node:fs";
import * as path from "node:path";
import { invalidArgument, notFound } from "../../core/errors.js";
import { quote, WORKSPACE_PATTERN } from "../../core/ids.js";
import type { BlobInfo, BlobStorage } from "../blobs.js";
import { ensureDir, removeStaleTemps } from "./create-file.js";
import { ioError } from "./fs-errors.js";
import { closeQuietly, errnoCode, type FsOps, fsyncDir, readAt, writeAll } from "./fs-ops.js";
import { inside, tempName } from "./paths.js";

/**
 * Blobs of the JSONL engine, as files in the workspace:
 *
 *   <dataDir>/<workspace>/blobs/<first 2 hex>/<sha256>     stored blobs
 *   <dataDir>/<workspace>/blobs/uploads/<sha256>           unfinished uploads
 *
 * A blob is written like a session is created (create-file.ts): a temp file
 * in its directory, fsynced, hard-linked to its name (EEXIST: another
 * writer stored the same content first, which is the same blob), the
 * directory fsynced; so a name is never there with half its content. An
 * upload grows in place and is linked the same way once its hash is
 * checked. The file's mtime is the blob's last use: `stat` with touch sets
 * it (with utimes, outside FsOps: a lost touch after a crash is harmless,
 * since the entries it protected are then either durable, and seen by the
 * collector's mark phase, or never acknowledged).
 */
export class BlobFiles implements BlobStorage {
  constructor(
    private readonly ops: FsOps,
    private readonly dataDir: string,
    private readonly sync: boolean,
  ) {}

  private root(workspace: string): string {
    if (!WORKSPACE_PATTERN.test(workspace)) {
      throw invalidArgument(`invalid workspace ${quote(workspace)}`);
    }
    return inside(this.dataDir, path.join(this.dataDir, workspace, "blobs"));
  }

  /** Callers validated `sha256` (64 hex digits): no separator can reach the path. */
  private blobPath(workspace: string, sha256: string): string {
    return path.join(this.root(workspace), sha256.slice(0, 2), sha256);
  }

  private uploadPath(workspace: string, sha256: string): string {
    return path.join(this.root(workspace), "uploads", sha256);
  }

  async stat(workspace: string, sha256: string, touch: boolean): Promise<number | undefined> {
    const file = this.blobPath(workspace, sha256);
    try {
      const st = await this.ops.stat(file);
      if (touch) touchFile(file);
      return st.size;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return undefined;
      throw ioError(err, `reading blob ${sha256}`, this.dataDir);
    }
  }

  async put(workspace: string, sha256: string, data: Uint8Array): Promise<void> {
    if ((await this.stat(workspace, sha256, true)) !== undefined) return;
    const file = this.blobPath(workspace, sha256);
    const dir = path.dirname(file);
    try {
      await ensureDir(this.ops, dir, this.sync);
      const temp = path.join(dir, tempName(sha256, randomBytes(6).toString("hex")));
      const fd = await this.ops.open(temp, "wx");
      try {
        try {
          await writeAll(this.ops, fd, Buffer.from(data.buffer, data.byteOffset, data.length), 0);
          if (this.sync) await this.ops.fdatasync(fd);
        } finally {
          await this.ops.close(fd);
        }
        await this.link(temp, file);
      } finally {
        await this.ops.unlink(temp).catch(() => undefined);
      }
      if (this.sync) await fsyncDir(this.ops, dir);
    } catch (err) {
      throw ioError(err, `storing blob ${sha256}`, this.dataDir);
    }
  }

  /** Links a complete file to a blob's name; one already there is the same content. */
  private async link(from: string, to: string): Promise<void> {
    try {
      await this.ops.link(from, to);
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
      touchFile(to);
    }
  }

  async read(workspace: string, sha256: string, offset: number, length: number) {
    const file = this.blobPath(workspace, sha256);
    let fd: number | undefined;
    try {
      fd = await this.ops.open(file, "r");
      // The Buffer itself (a Uint8Array): a copy would double what a read holds.
      return await readAt(this.ops, fd, offset, length);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") {
        throw notFound(`blob ${sha256} not found in workspace ${quote(workspace)}`);
      }
      throw ioError(err, `reading blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(this.ops, fd);
    }
  }

  async uploaded(workspace: string, sha256: string): Promise<number> {
    try {
      return (await this.ops.stat(this.uploadPath(workspace, sha256))).size;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return 0;
      throw ioError(err, `reading the upload of blob ${sha256}`, this.dataDir);
    }
  }

  async appendUpload(workspace: string, sha256: string, offset: number, data: Uint8Array) {
    const file = this.uploadPath(workspace, sha256);
    let fd: number | undefined;
    try {
      await ensureDir(this.ops, path.dirname(file), false);
      fd = await this.ops.open(file, offset === 0 ? "w" : "r+");
      await writeAll(this.ops, fd, Buffer.from(data.buffer, data.byteOffset, data.length), offset);
      await this.ops.ftruncate(fd, offset + data.length);
      return offset + data.length;
    } catch (err) {
      throw ioError(err, `uploading blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(this.ops, fd);
    }
  }

  async commitUpload(
    workspace: string,
    sha256: string,
    verify: (chunks: AsyncIterable<Uint8Array>) => Promise<boolean>,
  ): Promise<boolean> {
    const upload = this.uploadPath(workspace, sha256);
    const file = this.blobPath(workspace, sha256);
    const ops = this.ops;
    let fd: number | undefined;
    try {
      fd = await ops.open(upload, "r");
      const size = (await ops.fstat(fd)).size;
      const handle = fd;
      const ok = await verify(
        (async function* () {
          for (let at = 0; at < size; at += CHUNK) {
            yield await readAt(ops, handle, at, Math.min(CHUNK, size - at));
          }
        })(),
      );
      if (!ok) {
        await ops.unlink(upload);
        return false;
      }
      if (this.sync) await ops.fdatasync(fd);
      await ensureDir(ops, path.dirname(file), this.sync);
      await this.link(upload, file);
      await ops.unlink(upload);
      if (this.sync) await fsyncDir(ops, path.dirname(file));
      return true;
    } catch (err) {
      throw ioError(err, `storing the upload of blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(ops, fd);
    }
  }

  async list(workspace: string): Promise<BlobInfo[]> {
    const root = this.root(workspace);
    const out: BlobInfo[] = [];
    try {
      for (const name of await this.readdirOrEmpty(root)) {
        const upload = name === "uploads";
        if (!upload && !/^[0-9a-f]{2}$/.test(name)) continue;
        const dir = path.join(root, name);
        // A crash between a temp file's write and its link leaves it: gone once stale.
        await removeStaleTemps(this.ops, dir);
        for (const sha256 of await this.readdirOrEmpty(dir)) {
          if (!/^[0-9a-f]{64}$/.test(sha256)) continue;
          try {
            const st = await this.ops.stat(path.join(dir, sha256));
            out.push({ sha256, size: st.size, touchedMs: st.mtimeMs, upload });
          } catch (err) {
            if (errnoCode(err) !== "ENOENT") throw err;
          }
        }
      }
      return out;
    } catch (err) {
      throw ioError(err, `listing the blobs of workspace ${quote(workspace)}`, this.dataDir);
    }
  }

  private async readdirOrEmpty(dir: string): Promise<string[]> {
    try {
      return await this.ops.readdir(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return [];
      throw err;
    }
  }

  async delete(workspace: string, sha256: string, upload: boolean, untouchedBeforeMs: number) {
    const file = upload ? this.uploadPath(workspace, sha256) : this.blobPath(workspace, sha256);
    try {
      const st = await this.ops.stat(file);
      if (st.mtimeMs >= untouchedBeforeMs) return false;
      await this.ops.unlink(file);
      return true;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return false;
      throw ioError(err, `removing blob ${sha256}`, this.dataDir);
    }
  }
}

/** Bytes read at a time when an upload's content is hashed. */
const CHUNK = 1024 * 1024;

function touchFile(file: string): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    // Gone meanwhile: the caller finds out when it reads or links it.
  }
}
