import * as path from "node:path";
import { WORKSPACE_PATTERN } from "../../core/ids.js";
import {
  parseShareRecord,
  type ShareRecord,
  type ShareStorage,
  shareRecordJson,
} from "../shares.js";
import { ensureDir } from "./create-file.js";
import { errnoCode, type FsOps, fsyncDir, readWholeText, writeAll } from "./fs-ops.js";
import { sessionsDir } from "./paths.js";

const DIGEST = /^[0-9a-f]{64}$/;

/**
 * Share records on JSONL: one file per share,
 * `<dataDir>/<workspace>/shares/<sha256 of the token>.json`, written whole
 * to a temporary file, fsynced, renamed over the name and the directory
 * fsynced (a crash leaves the old record or the new one, never half of
 * one; a leftover temporary file is ignored). A revoke rewrites the file
 * the same way. The token is not in it (src/storage/shares.ts).
 *
 * ReadShare names no workspace: a digest is looked for in each workspace's
 * shares directory (a stat per workspace; the workspace of a digest found
 * once is remembered). Several processes may share a data dir: every read
 * goes to the files.
 */
export class JsonlShares implements ShareStorage {
  /** Digest -> workspace, for shares found once. */
  private readonly where = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ops: FsOps,
    private readonly dataDir: string,
    private readonly sync: boolean,
  ) {}

  private dir(workspace: string): string {
    return path.join(path.dirname(sessionsDir(this.dataDir, workspace)), "shares");
  }

  private file(workspace: string, digest: string): string {
    if (!DIGEST.test(digest)) throw new Error(`not a share digest: ${digest}`);
    return path.join(this.dir(workspace), `${digest}.json`);
  }

  /** Writes run one at a time in this process (a revoke reads, then writes). */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async write(record: ShareRecord): Promise<void> {
    const dir = this.dir(record.workspace);
    await ensureDir(this.ops, dir, this.sync);
    const target = this.file(record.workspace, record.digest);
    const tmp = `${target}.tmp-${process.pid}`;
    const fd = await this.ops.open(tmp, "w", 0o600);
    try {
      await writeAll(this.ops, fd, Buffer.from(`${shareRecordJson(record)}\n`), 0);
      if (this.sync) await this.ops.fsync(fd);
    } finally {
      await this.ops.close(fd);
    }
    if (this.ops.rename === undefined) throw new Error("this file system cannot rename");
    await this.ops.rename(tmp, target);
    if (this.sync) await fsyncDir(this.ops, dir);
    this.where.set(record.digest, record.workspace);
  }

  private async read(workspace: string, digest: string): Promise<ShareRecord | undefined> {
    let text: string | undefined;
    try {
      text = await readWholeText(this.ops, this.file(workspace, digest));
    } catch (err) {
      // A file at the data dir's top level named like a workspace (a keyring, notes).
      if (errnoCode(err) === "ENOTDIR") return undefined;
      throw err;
    }
    if (text === undefined) return undefined;
    const r = parseShareRecord(text);
    return r !== undefined && r.digest === digest && r.workspace === workspace ? r : undefined;
  }

  put(record: ShareRecord): Promise<void> {
    return this.serial(() => this.write(record));
  }

  async byDigest(digest: string): Promise<ShareRecord | undefined> {
    if (!DIGEST.test(digest)) return undefined;
    const known = this.where.get(digest);
    if (known !== undefined) {
      const r = await this.read(known, digest);
      if (r !== undefined) return r;
    }
    for (const ws of await this.readdir(this.dataDir)) {
      if (!WORKSPACE_PATTERN.test(ws) || ws === known) continue;
      const r = await this.read(ws, digest);
      if (r !== undefined) {
        this.where.set(digest, ws);
        return r;
      }
    }
    return undefined;
  }

  async list(workspace: string): Promise<ShareRecord[]> {
    const out: ShareRecord[] = [];
    for (const name of await this.readdir(this.dir(workspace))) {
      const m = /^([0-9a-f]{64})\.json$/.exec(name);
      if (m === null) continue;
      const r = await this.read(workspace, m[1] as string);
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  revoke(workspace: string, digest: string, atMs: number): Promise<ShareRecord | undefined> {
    return this.serial(async () => {
      const r = await this.read(workspace, digest);
      if (r === undefined || r.revokedAtMs !== 0) return r;
      const next = { ...r, revokedAtMs: atMs };
      await this.write(next);
      return next;
    });
  }

  async revokeSessions(
    workspace: string,
    sessionIds: readonly string[],
    atMs: number,
  ): Promise<number> {
    const ids = new Set(sessionIds);
    let n = 0;
    for (const r of await this.list(workspace)) {
      if (!ids.has(r.sessionId) || r.revokedAtMs !== 0) continue;
      const after = await this.revoke(workspace, r.digest, atMs);
      if (after?.revokedAtMs === atMs) n++;
    }
    return n;
  }

  private async readdir(dir: string): Promise<string[]> {
    try {
      return await this.ops.readdir(dir);
    } catch (err) {
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return [];
      throw err;
    }
  }
}
