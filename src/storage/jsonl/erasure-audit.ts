import * as path from "node:path";
import { ensureDir } from "./create-file.js";
import { errnoCode, type FsOps, fsyncDir, readWholeText, writeAll } from "./fs-ops.js";
import { sessionsDir } from "./paths.js";

/**
 * The erasure audit log of a workspace: `<dataDir>/<workspace>/erasures.jsonl`,
 * one JSON object per line (src/store/erase.ts writes them: who, when,
 * what was asked, how many sessions and entries; never content). Append
 * only: each record is one write(2) in append mode, fsynced (and the
 * directory fsynced when the file is new) before the erasure is answered.
 * A line without its newline (a crash mid-write) is ignored on reading.
 */
export class ErasureAudit {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ops: FsOps,
    private readonly dataDir: string,
    private readonly sync: boolean,
  ) {}

  file(workspace: string): string {
    return path.join(path.dirname(sessionsDir(this.dataDir, workspace)), "erasures.jsonl");
  }

  append(workspace: string, record: string): Promise<void> {
    const run = this.chain.then(() => this.appendNow(workspace, record));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async appendNow(workspace: string, record: string): Promise<void> {
    const file = this.file(workspace);
    const dir = path.dirname(file);
    await ensureDir(this.ops, dir, this.sync);
    let isNew = false;
    try {
      await this.ops.stat(file);
    } catch (err) {
      if (errnoCode(err) !== "ENOENT") throw err;
      isNew = true;
    }
    const fd = await this.ops.open(file, "a", 0o600);
    try {
      // Append mode: the position is ignored, every record lands at the end.
      await writeAll(this.ops, fd, Buffer.from(`${record}\n`), 0);
      if (this.sync) await this.ops.fsync(fd);
    } finally {
      await this.ops.close(fd);
    }
    if (isNew && this.sync) await fsyncDir(this.ops, dir);
  }

  async read(workspace: string): Promise<string[]> {
    const file = this.file(workspace);
    const text = await readWholeText(this.ops, file);
    if (text === undefined) return [];
    const lines = text.split("\n");
    lines.pop(); // "" after the last newline, or a torn last line
    return lines.filter((l) => l.length > 0);
  }
}
