import { randomBytes } from "node:crypto";
import { utimesSync } from "node:fs";
import * as path from "node:path";
import {
  dataLoss,
  failedPrecondition,
  invalidArgument,
  isSessiondError,
  notFound,
} from "../../core/errors.js";
import { quote, WORKSPACE_PATTERN } from "../../core/ids.js";
import type { BlobInfo, BlobStorage } from "../blobs.js";
import { newKey } from "../seal/aead.js";
import {
  BlobSealer,
  openSegments,
  openUploadChunk,
  plainSizeOf,
  sealBlob,
  sealUploadChunk,
  segmentSpan,
  uploadRecordSize,
} from "../seal/blob-seal.js";
import { createExclusive, ensureDir, removeStaleTemps } from "./create-file.js";
import { ioError } from "./fs-errors.js";
import {
  closeQuietly,
  errnoCode,
  type FsOps,
  fsyncDir,
  readAt,
  readWholeText,
  writeAll,
} from "./fs-ops.js";
import { inside, tempName } from "./paths.js";
import type { EncryptionOptions } from "./session-keys.js";

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
 *
 * Sealed blobs (encryption at rest, SPEC §12; seal/blob-seal.ts): in a
 * workspace whose new sessions are sealed, blobs are stored sealed under
 * the workspace's blob data key, named by the SHA-256 of their plaintext
 * with `.sealed` added (so dedup and reads by hash work as before, and a
 * clear blob and a sealed one are never confused):
 *
 *   <dataDir>/<workspace>/blobs/blobs.key                  the blob data key, wrapped
 *   <dataDir>/<workspace>/blobs/<first 2 hex>/<sha256>.sealed
 *   <dataDir>/<workspace>/blobs/uploads/<sha256>.sealed    an upload, chunk by chunk
 *
 * blobs.key holds {"format":"sessiond-blob-key","version":1,"workspace",
 * "keyId","keyVersion","wrapped"}, wrapped by the workspace's key with the
 * context {workspace, blobs: "workspace"}; it is written durably (temp,
 * fsync, link, directory fsync) before the first sealed blob. Blobs stored
 * in clear before sealing was turned on stay readable (`sealExisting`
 * seals them: `sessiond seal`). Sizes reported (stat, list) are the
 * plaintext's.
 */
export class BlobFiles implements BlobStorage {
  /** Unwrapped blob data keys, by workspace. */
  private readonly keys = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly ops: FsOps,
    private readonly dataDir: string,
    private readonly sync: boolean,
    /** Encryption at rest (the engine's): the workspaces whose new blobs are sealed, and the keys. */
    private readonly encryption?: EncryptionOptions,
  ) {}

  /** True when the new blobs of `workspace` are sealed. */
  seals(workspace: string): boolean {
    const w = this.encryption?.workspaces;
    return w !== undefined && (w === "all" || w.includes(workspace));
  }

  private keyFile(workspace: string): string {
    return path.join(this.root(workspace), "blobs.key");
  }

  /**
   * The workspace's blob data key: read and unwrapped, or (with `create`)
   * made, wrapped and written durably when there is none yet.
   */
  private blobKey(workspace: string, create: boolean): Promise<Buffer> {
    const known = this.keys.get(workspace);
    if (known !== undefined) return known;
    const made = this.loadKey(workspace, create);
    this.keys.set(workspace, made);
    made.catch(() => this.keys.delete(workspace));
    return made;
  }

  private async loadKey(workspace: string, create: boolean): Promise<Buffer> {
    const provider = this.encryption?.keys;
    const context = { workspace, blobs: "workspace" };
    const file = this.keyFile(workspace);
    if (provider === undefined) {
      throw failedPrecondition(
        `the blobs of workspace ${quote(workspace)} are encrypted but no keyring is configured (serve --keyring FILE)`,
      );
    }
    let replaced = false;
    for (let attempt = 0; ; attempt++) {
      const text = await readWholeText(this.ops, file);
      if (text !== undefined) {
        let k: Partial<BlobKeyFile>;
        try {
          k = JSON.parse(text) as Partial<BlobKeyFile>;
        } catch {
          throw failedPrecondition(
            `the blob key file of workspace ${quote(workspace)} is malformed`,
          );
        }
        if (k.destroyed !== undefined) {
          if (!create || replaced) {
            throw failedPrecondition(
              `the blobs of workspace ${quote(workspace)} were erased (their key is destroyed)`,
            );
          }
          // The workspace was erased; a new sealed blob gets a new key. Sealed files a
          // crash left under the destroyed key go first (they no longer open, and would
          // pass for the new key's by their names), then the tombstone.
          await this.removeSealed(workspace);
          await this.ops.unlink(file).catch((err: unknown) => {
            if (errnoCode(err) !== "ENOENT") throw err;
          });
          if (this.sync) await fsyncDir(this.ops, path.dirname(file));
          replaced = true;
          attempt = -1;
          continue;
        }
        if (
          k.format !== BLOB_KEY_FORMAT ||
          k.workspace !== workspace ||
          typeof k.keyId !== "string" ||
          typeof k.keyVersion !== "number" ||
          typeof k.wrapped !== "string"
        ) {
          throw failedPrecondition(
            `the blob key file of workspace ${quote(workspace)} is malformed`,
          );
        }
        const key = await provider.unwrap(
          { keyId: k.keyId, version: k.keyVersion, wrapped: k.wrapped },
          context,
        );
        return Buffer.from(key);
      }
      if (!create || attempt > 0) {
        throw failedPrecondition(
          `the blobs of workspace ${quote(workspace)} are encrypted but its blob key file is missing (blobs/blobs.key)`,
        );
      }
      const dataKey = newKey();
      const w = await provider.wrap(workspace, dataKey, context);
      const content: BlobKeyFile = {
        format: BLOB_KEY_FORMAT,
        version: 1,
        workspace,
        keyId: w.keyId,
        keyVersion: w.version,
        wrapped: w.wrapped,
      };
      await ensureDir(this.ops, path.dirname(file), this.sync);
      try {
        await createExclusive(
          this.ops,
          file,
          "blobs",
          Buffer.from(`${JSON.stringify(content)}\n`),
          this.sync,
        );
        return dataKey;
      } catch (err) {
        // Another writer made it first: that one is the key.
        if (!isSessiondError(err, "ALREADY_EXISTS")) throw err;
      }
    }
  }

  private root(workspace: string): string {
    if (!WORKSPACE_PATTERN.test(workspace)) {
      throw invalidArgument(`invalid workspace ${quote(workspace)}`);
    }
    return inside(this.dataDir, path.join(this.dataDir, workspace, "blobs"));
  }

  /** Callers validated `sha256` (64 hex digits): no separator can reach the path. */
  private blobPath(workspace: string, sha256: string, sealed = false): string {
    const name = sealed ? `${sha256}${SEALED}` : sha256;
    return path.join(this.root(workspace), sha256.slice(0, 2), name);
  }

  private uploadPath(workspace: string, sha256: string, sealed = false): string {
    return path.join(this.root(workspace), "uploads", sealed ? `${sha256}${SEALED}` : sha256);
  }

  /**
   * The stored blob: its file, whether it is sealed, its plaintext size.
   * The form the workspace writes now is looked for first.
   */
  private async find(
    workspace: string,
    sha256: string,
  ): Promise<{ file: string; sealed: boolean; size: number } | undefined> {
    const first = this.seals(workspace);
    for (const sealed of [first, !first]) {
      const file = this.blobPath(workspace, sha256, sealed);
      try {
        const st = await this.ops.stat(file);
        if (!sealed) return { file, sealed, size: st.size };
        const size = plainSizeOf(st.size);
        if (size === undefined) {
          throw dataLoss(
            `blob ${sha256} in workspace ${quote(workspace)} is damaged (its sealed file has ${st.size} bytes, no sealed blob has)`,
          );
        }
        return { file, sealed, size };
      } catch (err) {
        if (errnoCode(err) !== "ENOENT") throw err;
      }
    }
    return undefined;
  }

  async stat(workspace: string, sha256: string, touch: boolean): Promise<number | undefined> {
    try {
      const found = await this.find(workspace, sha256);
      if (found !== undefined && touch) touchFile(found.file);
      return found?.size;
    } catch (err) {
      throw ioError(err, `reading blob ${sha256}`, this.dataDir);
    }
  }

  async put(workspace: string, sha256: string, data: Uint8Array): Promise<void> {
    if ((await this.stat(workspace, sha256, true)) !== undefined) return;
    const sealed = this.seals(workspace);
    const file = this.blobPath(workspace, sha256, sealed);
    const dir = path.dirname(file);
    try {
      const bytes = sealed
        ? sealBlob(await this.blobKey(workspace, true), workspace, sha256, data)
        : Buffer.from(data.buffer, data.byteOffset, data.length);
      await ensureDir(this.ops, dir, this.sync);
      await this.writeLinked(dir, sha256, file, async (fd) => {
        await writeAll(this.ops, fd, bytes, 0);
      });
      if (this.sync) await fsyncDir(this.ops, dir);
    } catch (err) {
      throw ioError(err, `storing blob ${sha256}`, this.dataDir);
    }
  }

  /** A temp file in `dir` written by `write`, fdatasynced, linked to `file` (see `link`). */
  private async writeLinked(
    dir: string,
    sha256: string,
    file: string,
    write: (fd: number) => Promise<void>,
  ): Promise<void> {
    const temp = path.join(dir, tempName(sha256, randomBytes(6).toString("hex")));
    const fd = await this.ops.open(temp, "wx");
    try {
      try {
        await write(fd);
        if (this.sync) await this.ops.fdatasync(fd);
      } finally {
        await this.ops.close(fd);
      }
      await this.link(temp, file);
    } finally {
      await this.ops.unlink(temp).catch(() => undefined);
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
    let fd: number | undefined;
    try {
      const found = await this.find(workspace, sha256);
      if (found === undefined) throw enoent();
      fd = await this.ops.open(found.file, "r");
      // The Buffer itself (a Uint8Array): a copy would double what a read holds.
      if (!found.sealed) return await readAt(this.ops, fd, offset, length);
      const key = await this.blobKey(workspace, false);
      const span = segmentSpan(offset, length, found.size);
      if (span === undefined) return Buffer.alloc(0);
      const bytes = await readAt(this.ops, fd, span.fileStart, span.fileEnd - span.fileStart);
      return openSegments(key, workspace, sha256, found.size, bytes, offset, length);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") {
        throw notFound(`blob ${sha256} not found in workspace ${quote(workspace)}`);
      }
      throw ioError(err, `reading blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(this.ops, fd);
    }
  }

  /**
   * The complete records of a sealed upload: each chunk's offset, where its
   * sealed part is and how long; `end` where the next record goes.
   */
  private async uploadRecords(fd: number): Promise<{
    records: { offset: number; at: number; length: number }[];
    plain: number;
    end: number;
  }> {
    const size = (await this.ops.fstat(fd)).size;
    const records: { offset: number; at: number; length: number }[] = [];
    let at = 0;
    let plain = 0;
    while (at + 4 <= size) {
      const n = (await readAt(this.ops, fd, at, 4)).readUInt32BE(0);
      const whole = uploadRecordSize(n);
      if (at + whole > size) break; // torn by a crash: written over by the next chunk
      records.push({ offset: plain, at: at + 4, length: whole - 4 });
      plain += n;
      at += whole;
    }
    return { records, plain, end: at };
  }

  async uploaded(workspace: string, sha256: string): Promise<number> {
    const sealed = this.seals(workspace);
    let fd: number | undefined;
    try {
      if (!sealed) return (await this.ops.stat(this.uploadPath(workspace, sha256))).size;
      fd = await this.ops.open(this.uploadPath(workspace, sha256, true), "r");
      return (await this.uploadRecords(fd)).plain;
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return 0;
      throw ioError(err, `reading the upload of blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(this.ops, fd);
    }
  }

  async appendUpload(workspace: string, sha256: string, offset: number, data: Uint8Array) {
    const sealed = this.seals(workspace);
    const file = this.uploadPath(workspace, sha256, sealed);
    let fd: number | undefined;
    try {
      await ensureDir(this.ops, path.dirname(file), false);
      fd = await this.ops.open(file, offset === 0 ? "w" : "r+");
      if (!sealed) {
        await writeAll(
          this.ops,
          fd,
          Buffer.from(data.buffer, data.byteOffset, data.length),
          offset,
        );
        await this.ops.ftruncate(fd, offset + data.length);
        return offset + data.length;
      }
      const { plain, end } = await this.uploadRecords(fd);
      if (plain !== offset) {
        throw failedPrecondition(
          `upload of blob ${sha256} holds ${plain} bytes: send the chunk at offset ${plain}, not ${offset}`,
        );
      }
      const key = await this.blobKey(workspace, true);
      const record = sealUploadChunk(key, workspace, sha256, offset, data);
      await writeAll(this.ops, fd, record, end);
      await this.ops.ftruncate(fd, end + record.length);
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
    if (this.seals(workspace)) return this.commitSealedUpload(workspace, sha256, verify);
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

  /**
   * A sealed upload made the blob: its chunks opened and checked, then
   * sealed again as the blob's segments into a temp file linked to the
   * blob's name (the upload's records are not the blob's segments).
   */
  private async commitSealedUpload(
    workspace: string,
    sha256: string,
    verify: (chunks: AsyncIterable<Uint8Array>) => Promise<boolean>,
  ): Promise<boolean> {
    const upload = this.uploadPath(workspace, sha256, true);
    const file = this.blobPath(workspace, sha256, true);
    const ops = this.ops;
    let fd: number | undefined;
    try {
      fd = await ops.open(upload, "r");
      const handle = fd;
      const key = await this.blobKey(workspace, false);
      const { records, plain } = await this.uploadRecords(fd);
      const chunks = async function* () {
        for (const r of records) {
          const sealed = await readAt(ops, handle, r.at, r.length);
          yield openUploadChunk(key, workspace, sha256, r.offset, sealed);
        }
      };
      if (!(await verify(chunks()))) {
        await ops.unlink(upload);
        return false;
      }
      const dir = path.dirname(file);
      await ensureDir(ops, dir, this.sync);
      await this.writeLinked(dir, sha256, file, async (out) => {
        const sealer = new BlobSealer(key, workspace, sha256, plain);
        let at = 0;
        const write = async (parts: Buffer[]) => {
          for (const p of parts) {
            await writeAll(ops, out, p, at);
            at += p.length;
          }
        };
        if (records.length === 0) await write(sealer.push(Buffer.alloc(0)));
        for await (const c of chunks()) await write(sealer.push(c));
      });
      await ops.unlink(upload);
      if (this.sync) await fsyncDir(ops, dir);
      return true;
    } catch (err) {
      throw ioError(err, `storing the upload of blob ${sha256}`, this.dataDir);
    } finally {
      await closeQuietly(ops, fd);
    }
  }

  async list(workspace: string): Promise<BlobInfo[]> {
    const root = this.root(workspace);
    const out = new Map<string, BlobInfo>();
    try {
      for (const name of await this.readdirOrEmpty(root)) {
        const upload = name === "uploads";
        if (!upload && !/^[0-9a-f]{2}$/.test(name)) continue;
        const dir = path.join(root, name);
        // A crash between a temp file's write and its link leaves it: gone once stale.
        await removeStaleTemps(this.ops, dir);
        for (const file of await this.readdirOrEmpty(dir)) {
          const m = /^([0-9a-f]{64})(\.sealed)?$/.exec(file);
          if (m === null) continue;
          const sha256 = m[1] as string;
          const sealed = m[2] !== undefined;
          try {
            const st = await this.ops.stat(path.join(dir, file));
            const size = sealed && !upload ? (plainSizeOf(st.size) ?? st.size) : st.size;
            const k = `${upload ? "u" : "b"}${sha256}`;
            const seen = out.get(k);
            // A blob in both forms (a crash while `sealExisting` ran) is one blob.
            const touchedMs = Math.max(seen?.touchedMs ?? 0, st.mtimeMs);
            out.set(k, { sha256, size, touchedMs, upload });
          } catch (err) {
            if (errnoCode(err) !== "ENOENT") throw err;
          }
        }
      }
      return [...out.values()];
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
    let removed = false;
    for (const sealed of [false, true]) {
      const file = upload
        ? this.uploadPath(workspace, sha256, sealed)
        : this.blobPath(workspace, sha256, sealed);
      try {
        const st = await this.ops.stat(file);
        if (st.mtimeMs >= untouchedBeforeMs) return false;
        await this.ops.unlink(file);
        removed = true;
      } catch (err) {
        if (errnoCode(err) === "ENOENT") continue;
        throw ioError(err, `removing blob ${sha256}`, this.dataDir);
      }
    }
    return removed;
  }

  /**
   * After a key rotation (`sessiond keys rewrap`): the workspace's blob
   * data key wrapped again under its workspace key's current version, the
   * key file replaced atomically (temp, fsync, rename, directory fsync); no
   * blob changes. The versions it was and is wrapped under, or undefined
   * when the workspace has no sealed blobs.
   */
  async rewrapKey(workspace: string): Promise<{ from: number; to: number } | undefined> {
    const provider = this.encryption?.keys;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const file = this.keyFile(workspace);
    const text = await readWholeText(this.ops, file);
    if (text === undefined) return undefined;
    const k = JSON.parse(text) as BlobKeyFile;
    // Destroyed (the workspace erased): nothing to wrap.
    if (k.destroyed !== undefined) return undefined;
    if (typeof k.keyId !== "string" || typeof k.keyVersion !== "number") {
      throw failedPrecondition(`the blob key file of workspace ${quote(workspace)} is malformed`);
    }
    const current = await provider.currentVersion(k.keyId);
    if (current === k.keyVersion) return { from: current, to: current };
    const context = { workspace, blobs: "workspace" };
    const dataKey = await provider.unwrap(
      { keyId: k.keyId, version: k.keyVersion, wrapped: k.wrapped },
      context,
    );
    const w = await provider.wrap(k.keyId, dataKey, context);
    const content: BlobKeyFile = {
      ...k,
      keyId: w.keyId,
      keyVersion: w.version,
      wrapped: w.wrapped,
    };
    await this.replaceKeyFile(file, content);
    return { from: k.keyVersion, to: w.version };
  }

  /** The blob key file replaced atomically: temp file, fsync, rename over it, directory fsync. */
  private async replaceKeyFile(file: string, content: object): Promise<void> {
    const rename = this.ops.rename;
    if (rename === undefined) throw failedPrecondition("this file system cannot rename files");
    const dir = path.dirname(file);
    const temp = path.join(dir, tempName("blobs-key", randomBytes(6).toString("hex")));
    const fd = await this.ops.open(temp, "wx");
    try {
      await writeAll(this.ops, fd, Buffer.from(`${JSON.stringify(content)}\n`), 0);
      if (this.sync) await this.ops.fsync(fd);
    } finally {
      await this.ops.close(fd);
    }
    try {
      await rename.call(this.ops, temp, file);
    } catch (err) {
      await this.ops.unlink(temp).catch(() => undefined);
      throw err;
    }
    if (this.sync) await fsyncDir(this.ops, dir);
  }

  /**
   * Erasure of a whole workspace (SPEC §12): its blob data key destroyed,
   * then every sealed blob and sealed upload of the workspace removed
   * (they no longer open). The key file is replaced by a tombstone with no
   * key material (`{"format","version","workspace","destroyed":{"at"}}`;
   * temp file, fsync, rename, directory fsync) before any blob is removed,
   * so a crash in between leaves sealed files that nothing opens; the next
   * erasure, or the first new sealed blob (which makes a new key), removes
   * them. Idempotent. Blobs in clear are the erasure's business
   * (store/erase.ts: those no session references).
   */
  async destroyKey(workspace: string): Promise<{ destroyed: boolean; blobs: number }> {
    const file = this.keyFile(workspace);
    try {
      const text = await readWholeText(this.ops, file);
      let destroyed = false;
      if (text !== undefined) {
        let k: Partial<BlobKeyFile> = {};
        try {
          k = JSON.parse(text) as Partial<BlobKeyFile>;
        } catch {
          // Malformed: replaced by the tombstone all the same.
        }
        if (k.destroyed === undefined) {
          await this.replaceKeyFile(file, {
            format: BLOB_KEY_FORMAT,
            version: 1,
            workspace,
            destroyed: { at: new Date().toISOString() },
          });
          destroyed = true;
        }
      }
      this.keys.delete(workspace);
      return { destroyed, blobs: await this.removeSealed(workspace) };
    } catch (err) {
      throw ioError(err, `destroying the blob key of workspace ${quote(workspace)}`, this.dataDir);
    }
  }

  /** Removes every sealed blob and sealed upload of the workspace; how many. */
  private async removeSealed(workspace: string): Promise<number> {
    const root = this.root(workspace);
    let n = 0;
    for (const name of await this.readdirOrEmpty(root)) {
      if (name !== "uploads" && !/^[0-9a-f]{2}$/.test(name)) continue;
      const dir = path.join(root, name);
      let removed = false;
      for (const f of await this.readdirOrEmpty(dir)) {
        if (!/^[0-9a-f]{64}\.sealed$/.test(f)) continue;
        try {
          await this.ops.unlink(path.join(dir, f));
          removed = true;
          n++;
        } catch (err) {
          if (errnoCode(err) !== "ENOENT") throw err;
        }
      }
      if (removed && this.sync) await fsyncDir(this.ops, dir);
    }
    return n;
  }

  /**
   * `sessiond seal`: the workspace's blobs stored in clear sealed (each:
   * the sealed file written and linked durably, then the clear one
   * removed, the directory fsynced; a crash in between leaves both, read
   * as one, and the next run removes the clear one). Returns how many were
   * sealed. Only for a workspace this store seals.
   */
  async sealExisting(workspace: string): Promise<number> {
    if (!this.seals(workspace)) {
      throw failedPrecondition(`workspace ${quote(workspace)} is not one whose blobs are sealed`);
    }
    const root = this.root(workspace);
    let n = 0;
    try {
      for (const name of await this.readdirOrEmpty(root)) {
        if (!/^[0-9a-f]{2}$/.test(name)) continue;
        const dir = path.join(root, name);
        for (const sha256 of await this.readdirOrEmpty(dir)) {
          if (!/^[0-9a-f]{64}$/.test(sha256)) continue;
          const clear = path.join(dir, sha256);
          const sealed = this.blobPath(workspace, sha256, true);
          const exists = await this.ops.stat(sealed).then(
            () => true,
            (err: unknown) => {
              if (errnoCode(err) === "ENOENT") return false;
              throw err;
            },
          );
          if (!exists) {
            const data = await this.readClear(clear);
            if (data === undefined) continue;
            const bytes = sealBlob(await this.blobKey(workspace, true), workspace, sha256, data);
            await this.writeLinked(dir, sha256, sealed, (fd) => writeAll(this.ops, fd, bytes, 0));
            if (this.sync) await fsyncDir(this.ops, dir);
          }
          await this.ops.unlink(clear).catch((err: unknown) => {
            if (errnoCode(err) !== "ENOENT") throw err;
          });
          if (this.sync) await fsyncDir(this.ops, dir);
          n++;
        }
      }
      return n;
    } catch (err) {
      throw ioError(err, `sealing the blobs of workspace ${quote(workspace)}`, this.dataDir);
    }
  }

  private async readClear(file: string): Promise<Buffer | undefined> {
    let fd: number;
    try {
      fd = await this.ops.open(file, "r");
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return undefined;
      throw err;
    }
    try {
      return await readAt(this.ops, fd, 0, (await this.ops.fstat(fd)).size);
    } finally {
      await this.ops.close(fd);
    }
  }
}

const SEALED = ".sealed";
const BLOB_KEY_FORMAT = "sessiond-blob-key";

interface BlobKeyFile {
  format: typeof BLOB_KEY_FORMAT;
  version: 1;
  workspace: string;
  keyId: string;
  keyVersion: number;
  wrapped: string;
  /** Set when the workspace's blob key was destroyed (its erasure). */
  destroyed?: { at: string };
}

function enoent(): Error {
  return Object.assign(new Error("ENOENT"), { code: "ENOENT" });
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
