import { notFound } from "../core/errors.js";
import type { BlobInfo, BlobStorage } from "./blobs.js";

interface Held {
  data: Uint8Array;
  touchedMs: number;
}

interface Upload {
  chunks: Uint8Array[];
  size: number;
  touchedMs: number;
}

/** Blobs of the memory engine: maps, lost with the process like its sessions. */
export class MemoryBlobs implements BlobStorage {
  private readonly blobs = new Map<string, Held>();
  private readonly uploads = new Map<string, Upload>();

  async stat(workspace: string, sha256: string, touch: boolean): Promise<number | undefined> {
    const b = this.blobs.get(`${workspace}/${sha256}`);
    if (b !== undefined && touch) b.touchedMs = Date.now();
    return b?.data.length;
  }

  async put(workspace: string, sha256: string, data: Uint8Array): Promise<void> {
    const k = `${workspace}/${sha256}`;
    const b = this.blobs.get(k);
    if (b !== undefined) b.touchedMs = Date.now();
    else this.blobs.set(k, { data: data.slice(), touchedMs: Date.now() });
  }

  async read(workspace: string, sha256: string, offset: number, length: number) {
    const b = this.blobs.get(`${workspace}/${sha256}`);
    if (b === undefined) throw notFound(`blob ${sha256} not found in workspace "${workspace}"`);
    return b.data.slice(offset, offset + length);
  }

  async uploaded(workspace: string, sha256: string): Promise<number> {
    return this.uploads.get(`${workspace}/${sha256}`)?.size ?? 0;
  }

  async appendUpload(workspace: string, sha256: string, offset: number, data: Uint8Array) {
    const k = `${workspace}/${sha256}`;
    const u = this.uploads.get(k) ?? { chunks: [], size: 0, touchedMs: 0 };
    if (offset !== u.size) throw new Error(`upload of ${sha256} is at ${u.size}, not ${offset}`);
    u.chunks.push(data.slice());
    u.size += data.length;
    u.touchedMs = Date.now();
    this.uploads.set(k, u);
    return u.size;
  }

  async commitUpload(
    workspace: string,
    sha256: string,
    verify: (chunks: AsyncIterable<Uint8Array>) => Promise<boolean>,
  ): Promise<boolean> {
    const k = `${workspace}/${sha256}`;
    const u = this.uploads.get(k);
    if (u === undefined) return false;
    const ok = await verify(
      (async function* () {
        yield* u.chunks;
      })(),
    );
    this.uploads.delete(k);
    if (ok) await this.put(workspace, sha256, Buffer.concat(u.chunks));
    return ok;
  }

  async list(workspace: string): Promise<BlobInfo[]> {
    const out: BlobInfo[] = [];
    const prefix = `${workspace}/`;
    for (const [k, b] of this.blobs) {
      if (k.startsWith(prefix)) {
        out.push({
          sha256: k.slice(prefix.length),
          size: b.data.length,
          touchedMs: b.touchedMs,
          upload: false,
        });
      }
    }
    for (const [k, u] of this.uploads) {
      if (k.startsWith(prefix)) {
        out.push({
          sha256: k.slice(prefix.length),
          size: u.size,
          touchedMs: u.touchedMs,
          upload: true,
        });
      }
    }
    return out;
  }

  async delete(workspace: string, sha256: string, upload: boolean, untouchedBeforeMs: number) {
    const map: Map<string, { touchedMs: number }> = upload ? this.uploads : this.blobs;
    const k = `${workspace}/${sha256}`;
    const held = map.get(k);
    if (held === undefined || held.touchedMs >= untouchedBeforeMs) return false;
    map.delete(k);
    return true;
  }
}
