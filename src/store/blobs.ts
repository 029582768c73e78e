import { createHash } from "node:crypto";
import {
  BlobPart,
  type BlobRef,
  type ContentPart,
  type Entry,
} from "../../gen/sessiond/v1/entry_pb.js";
import {
  BLOB_PREVIEW_MAX_BYTES,
  type BlobContent,
  blobContentOf,
  blobRefPart,
  blobRefsOf,
  previewOfBytes,
  SHA256_PATTERN,
  TEXT_MEDIA_TYPE,
  withContent,
} from "../core/blob-parts.js";
import {
  failedPrecondition,
  invalidArgument,
  isSessiondError,
  notFound,
  resourceExhausted,
} from "../core/errors.js";
import { quote } from "../core/ids.js";
import type { BlobInfo } from "../storage/blobs.js";
import type { StorageEngine } from "../storage/engine.js";
import { KeyedTurns } from "./keyed-turns.js";
import type { StoreLimits } from "./limits.js";

/** The limits of StoreLimits that concern blobs. */
export type BlobLimits = Pick<StoreLimits, "blobThresholdBytes" | "maxBlobBytes" | "blobGraceMs">;

/** Bytes a GetBlob response carries at most. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

/** One chunk of a blob read. */
export interface BlobChunk {
  data: Uint8Array;
  offset: number;
  size: number;
}

/** What a collection of a workspace's blobs did. */
export interface BlobCollection {
  /** Blobs and unfinished uploads removed. */
  removed: number;
  /** Their bytes. */
  removedBytes: number;
  /** Blobs still referenced (or too young to judge). */
  kept: number;
  /** Set when nothing was removed because a session could not be read whole. */
  skipped?: string;
}

/** A part of an append to store as its blob (`content`) or a caller's reference to check (`ref`), at its index. */
type PartWork =
  | { readonly at: number; readonly ref: BlobRef; readonly content?: undefined }
  | { readonly at: number; readonly content: BlobContent; readonly ref?: undefined };

/** An entry of an append (at its index) with parts to store or check. */
interface EntryWork {
  readonly at: number;
  readonly entry: Entry;
  readonly parts: readonly ContentPart[];
  readonly work: readonly PartWork[];
}

function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** An upload whose content is not what its name says (it is discarded). */
function notHashing(size: number, sha256: string) {
  return invalidArgument(
    `the ${size} bytes uploaded do not hash to ${sha256}: upload discarded, send it again from offset 0`,
  );
}

function checkSha(sha256: string): string {
  if (!SHA256_PATTERN.test(sha256)) {
    throw invalidArgument(`invalid sha256 ${quote(sha256)}: want 64 lower-case hex digits`);
  }
  return sha256;
}

/**
 * The store's side of blobs: which parts become blobs and when they are
 * durable (before the entry that names them), the checks on references a
 * caller gives, chunked reads and uploads, and garbage collection. Engines
 * only keep bytes (storage/blobs.ts).
 */
export class BlobStore {
  /** Blobs an append of this process is about to reference, by workspace/sha: never collected. */
  private readonly inUse = new Map<string, number>();
  /** Collections per workspace (runs of one workspace go one after another). */
  private readonly collecting = new KeyedTurns();
  /** Collections queued and not started, by workspace and grace. */
  private readonly queued = new Map<string, Promise<BlobCollection>>();
  /**
   * Upload chunks by workspace and hash: chunks of one blob are taken one
   * at a time in this process. Two clients that upload the same content
   * (the same attachment) at once would otherwise both read the bytes held,
   * then both write at that offset: one answered FAILED_PRECONDITION by a
   * count read in the middle of the other's write, or, on JSONL, a first
   * chunk truncating the other's file.
   */
  private readonly uploading = new KeyedTurns();

  constructor(
    private readonly engine: StorageEngine,
    readonly limits: BlobLimits,
    /** Negative control (tests only): blobs written after the entries, not awaited. */
    private readonly afterAck = false,
  ) {}

  /**
   * Entries as they are to be stored: each text, thinking or image part
   * over the threshold replaced by a reference to its blob, stored durably
   * first (once per workspace: content-addressed); each reference a caller
   * gave checked against the stored blob and given its canonical preview.
   * Entries without such parts come back as they are (the same objects).
   * `use` runs with the blobs held against collection until it settles.
   */
  withBlobs<T>(
    workspace: string,
    entries: Entry[],
    use: (entries: Entry[]) => Promise<T>,
  ): Promise<T> {
    const work = this.blobWork(entries);
    // The usual batch has no part to store or check: it goes on as it is, without an await.
    if (work === undefined) return use(entries);
    return this.withBlobsStored(workspace, entries, work, use);
  }

  /**
   * The parts of `entries` to store as blobs (over the threshold) or to
   * check (a caller's references), by entry; undefined when there are none.
   * Judged synchronously, and allocating nothing for an ordinary batch: an
   * ordinary part costs an append no await and no garbage.
   */
  private blobWork(entries: readonly Entry[]): EntryWork[] | undefined {
    const threshold = this.limits.blobThresholdBytes;
    let out: EntryWork[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as Entry;
      if (entry.kind.case !== "message") continue;
      const parts = entry.kind.value.content;
      let work: PartWork[] | undefined;
      for (let j = 0; j < parts.length; j++) {
        const p = parts[j] as ContentPart;
        let w: PartWork | undefined;
        if (p.part.case === "blob") {
          w = { at: j, ref: p.part.value };
        } else if (threshold > 0) {
          const content = blobContentOf(p, threshold);
          if (content !== undefined) w = { at: j, content };
        }
        if (w === undefined) continue;
        work ??= [];
        work.push(w);
      }
      if (work === undefined) continue;
      out ??= [];
      out.push({ at: i, entry, parts, work });
    }
    return out;
  }

  private async withBlobsStored<T>(
    workspace: string,
    entries: Entry[],
    work: readonly EntryWork[],
    use: (entries: Entry[]) => Promise<T>,
  ): Promise<T> {
    // Stryker disable next-line ArrayDeclaration: a key never held is released as nothing (its absent count goes from 1 to 0 and is deleted)
    const held: string[] = [];
    try {
      const out = entries.slice();
      for (const w of work) {
        const parts = w.parts.slice();
        for (const p of w.work) {
          parts[p.at] =
            p.ref !== undefined
              ? await this.checkedRef(workspace, w.entry, p.ref, held)
              : await this.stored(workspace, w.entry, p.content, held);
        }
        out[w.at] = withContent(w.entry, parts);
      }
      return await use(out);
    } finally {
      for (const k of held) {
        const n = (this.inUse.get(k) ?? 1) - 1;
        if (n === 0) this.inUse.delete(k);
        else this.inUse.set(k, n);
      }
    }
  }

  private hold(workspace: string, sha256: string, held: string[]): void {
    const k = `${workspace}/${sha256}`;
    this.inUse.set(k, (this.inUse.get(k) ?? 0) + 1);
    held.push(k);
  }

  /** A part over the threshold, stored as its blob: the reference to put in its place. */
  private async stored(
    workspace: string,
    entry: Entry,
    content: BlobContent,
    held: string[],
  ): Promise<ContentPart> {
    this.checkSize(content.bytes.length, `a part of entry ${quote(entry.id)}`);
    const sha256 = sha256Hex(content.bytes);
    this.hold(workspace, sha256, held);
    if (this.afterAck) {
      // The broken order the negative control wants: the entry does not wait.
      setTimeout(() => this.engine.blobs.put(workspace, sha256, content.bytes).catch(() => {}), 20);
    } else {
      await this.engine.blobs.put(workspace, sha256, content.bytes);
    }
    return blobRefPart(content, sha256);
  }

  /** A caller's reference: to a stored blob of that size, naming a part, with the canonical preview. */
  private async checkedRef(
    workspace: string,
    entry: Entry,
    ref: BlobRef,
    held: string[],
  ): Promise<ContentPart> {
    const where = `entry ${quote(entry.id)}`;
    if (!SHA256_PATTERN.test(ref.sha256)) {
      throw invalidArgument(`${where}: blob reference with invalid sha256 ${quote(ref.sha256)}`);
    }
    if (
      ref.part !== BlobPart.TEXT &&
      ref.part !== BlobPart.THINKING &&
      ref.part !== BlobPart.IMAGE
    ) {
      throw invalidArgument(`${where}: blob reference ${ref.sha256} names no part (part is unset)`);
    }
    this.hold(workspace, ref.sha256, held);
    const size = await this.engine.blobs.stat(workspace, ref.sha256, true);
    if (size === undefined) {
      throw failedPrecondition(
        `${where} references blob ${ref.sha256}, which workspace ${quote(workspace)} does not hold: upload it first (PutBlob)`,
      );
    }
    if (BigInt(size) !== ref.size) {
      throw invalidArgument(
        `${where}: blob ${ref.sha256} has ${size} bytes, the reference says ${ref.size}`,
      );
    }
    let preview = "";
    let mediaType = ref.mediaType;
    if (ref.part !== BlobPart.IMAGE) {
      const head = await this.checkUtf8(workspace, ref.sha256, size, where);
      preview = previewOfBytes(head.subarray(0, BLOB_PREVIEW_MAX_BYTES));
      mediaType = TEXT_MEDIA_TYPE;
    }
    return {
      $typeName: "sessiond.v1.ContentPart",
      part: {
        case: "blob",
        value: {
          $typeName: "sessiond.v1.BlobRef",
          sha256: ref.sha256,
          size: ref.size,
          part: ref.part,
          mediaType,
          preview,
          signature: ref.part === BlobPart.THINKING ? ref.signature : undefined,
        },
      },
    };
  }

  /**
   * A text part's blob must be UTF-8, or the part it stands for could not be
   * given back. Returns its first chunk (the preview is cut from it).
   */
  private async checkUtf8(
    workspace: string,
    sha256: string,
    size: number,
    where: string,
  ): Promise<Uint8Array> {
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let head: Uint8Array = new Uint8Array(0);
    try {
      // Stryker disable next-line EqualityOperator: `at <= size` reads once more only when the size is a whole number of MiB, at the blob's end: no bytes, and decoding none after the final decode changes nothing
      for (let at = 0; at < size; at += BLOB_CHUNK_BYTES) {
        const chunk = await this.engine.blobs.read(workspace, sha256, at, BLOB_CHUNK_BYTES);
        if (at === 0) head = chunk;
        decoder.decode(chunk, { stream: at + chunk.length < size });
      }
      return head;
    } catch (err) {
      if (isSessiondError(err)) throw err;
      throw invalidArgument(
        `${where}: blob ${sha256} is not UTF-8 text, so it cannot be a text part`,
      );
    }
  }

  private checkSize(size: number, what: string): void {
    if (size > this.limits.maxBlobBytes) {
      throw resourceExhausted(
        `${what} of ${size} bytes exceeds the largest blob the server takes (${this.limits.maxBlobBytes} bytes, --max-blob-bytes)`,
      );
    }
  }

  /**
   * The whole content a reference names, or undefined when the workspace
   * does not hold it as referenced (missing, or another size).
   */
  async content(workspace: string, ref: BlobRef): Promise<Uint8Array | undefined> {
    const size = Number(ref.size);
    try {
      // One byte more than the reference says: a longer blob is another size too.
      const data = await this.engine.blobs.read(workspace, ref.sha256, 0, size + 1);
      return data.length === size ? data : undefined;
    } catch (err) {
      if (isSessiondError(err, "NOT_FOUND")) return undefined;
      throw err;
    }
  }

  /** A blob's bytes from `offset`, at most `length` (0: to the end), in chunks. */
  async *read(
    workspace: string,
    sha256: string,
    offset: number,
    length: number,
  ): AsyncGenerator<BlobChunk> {
    checkSha(sha256);
    const size = await this.engine.blobs.stat(workspace, sha256, false);
    if (size === undefined) {
      throw notFound(`blob ${sha256} not found in workspace ${quote(workspace)}`);
    }
    if (offset > size) {
      throw invalidArgument(`offset ${offset} is past the end of blob ${sha256} (${size} bytes)`);
    }
    const end = length === 0 ? size : Math.min(size, offset + length);
    if (offset === end) {
      yield { data: new Uint8Array(0), offset, size };
      return;
    }
    for (let at = offset; at < end; at += BLOB_CHUNK_BYTES) {
      const data = await this.engine.blobs.read(
        workspace,
        sha256,
        at,
        Math.min(BLOB_CHUNK_BYTES, end - at),
      );
      yield { data, offset: at, size };
    }
  }

  /**
   * One chunk of an upload (see PutBlob in the proto): the bytes held
   * after it, and whether the blob is stored.
   */
  put(
    workspace: string,
    sha256: string,
    size: number,
    offset: number,
    data: Uint8Array,
  ): Promise<{ received: number; stored: boolean }> {
    // Stryker disable next-line StringLiteral: one key for every upload would only make uploads of different blobs wait for each other
    return this.uploading.run(`${workspace}\n${sha256}`, () =>
      this.putNow(workspace, sha256, size, offset, data),
    );
  }

  private async putNow(
    workspace: string,
    sha256: string,
    size: number,
    offset: number,
    data: Uint8Array,
  ): Promise<{ received: number; stored: boolean }> {
    checkSha(sha256);
    this.checkSize(size, `blob ${sha256}`);
    const blobs = this.engine.blobs;
    const stored = await blobs.stat(workspace, sha256, true);
    if (stored !== undefined) return { received: stored, stored: true };
    if (offset + data.length > size) {
      throw invalidArgument(
        `chunk of blob ${sha256} ends at ${offset + data.length}, past its size ${size}`,
      );
    }
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: a shortcut; without it (or taken for a chunk that is not the whole blob, which then fails its hash) the upload path stores the same blob with the same answer
    if (offset === 0 && data.length === size) {
      // The whole blob in one chunk (up to 1 MiB from the clients): checked
      // in memory and stored in one write, no upload file to read back.
      if (sha256Hex(data) !== sha256) throw notHashing(size, sha256);
      await blobs.put(workspace, sha256, data);
      return { received: size, stored: true };
    }
    let received = await blobs.uploaded(workspace, sha256);
    if (offset > received || (offset < received && offset + data.length > received)) {
      throw failedPrecondition(
        `upload of blob ${sha256} holds ${received} bytes: send the chunk at offset ${received}, not ${offset}`,
      );
    }
    // A retried chunk the server has already is taken again, harmlessly.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: an empty chunk at the held offset appends nothing either way (at 0 an engine may make an empty upload, still 0 bytes held, collected as any unfinished upload)
    if (offset === received && data.length > 0) {
      received = await blobs.appendUpload(workspace, sha256, offset, data);
    }
    if (received < size) return { received, stored: false };
    const ok = await blobs.commitUpload(workspace, sha256, async (chunks) => {
      const hash = createHash("sha256");
      let n = 0;
      for await (const c of chunks) {
        hash.update(c);
        n += c.length;
      }
      // Stryker disable next-line ConditionalExpression,BlockStatement,BooleanLiteral: a count other than size means the bytes read back are not the ones the engine counted, which the hash below refuses too (short of a SHA-256 collision); the length goes first because it is free
      if (n !== size) return false;
      return hash.digest("hex") === sha256;
    });
    if (!ok) throw notHashing(size, sha256);
    return { received: size, stored: true };
  }

  /**
   * Removes the workspace's blobs that no entry references and unfinished
   * uploads, of those untouched for the grace period. Safe against appends
   * running meanwhile, here or in another process: an append touches every
   * blob it stores or names before its entry is written, and the engine
   * removes only what was untouched since the collection began. Nothing is
   * removed when a session cannot be read whole (its references are
   * unknown). Runs of one workspace queue behind each other.
   */
  collect(workspace: string, graceMs = this.limits.blobGraceMs): Promise<BlobCollection> {
    // A run that has not started yet will see everything this caller wants
    // seen (a burst of deletes, a retention sweep): it is shared.
    const k = `${workspace}\0${graceMs}`;
    const waiting = this.queued.get(k);
    if (waiting !== undefined) return waiting;
    const run = this.collecting.run(workspace, () => {
      this.queued.delete(k);
      return this.collectNow(workspace, graceMs);
    });
    this.queued.set(k, run);
    return run;
  }

  private async collectNow(workspace: string, graceMs: number): Promise<BlobCollection> {
    const cut = Date.now() - graceMs;
    const all = await this.engine.blobs.list(workspace);
    const old = all.filter((b) => b.touchedMs < cut);
    const result: BlobCollection = { removed: 0, removedBytes: 0, kept: all.length - old.length };
    if (old.length === 0) return result;
    const referenced = await this.referenced(workspace);
    if (typeof referenced === "string") {
      return { ...result, kept: all.length, skipped: referenced };
    }
    for (const b of old) {
      if (!this.removable(workspace, b, referenced)) {
        result.kept++;
      } else if (await this.engine.blobs.delete(workspace, b.sha256, b.upload, cut)) {
        result.removed++;
        result.removedBytes += b.size;
      } else {
        result.kept++;
      }
    }
    return result;
  }

  private removable(workspace: string, b: BlobInfo, referenced: Set<string>): boolean {
    if (b.upload) return true;
    return !referenced.has(b.sha256) && !this.inUse.has(`${workspace}/${b.sha256}`);
  }

  /** Every blob the workspace's entries reference, or why they could not all be read. */
  private async referenced(workspace: string): Promise<Set<string> | string> {
    const refs = new Set<string>();
    for (const sessionId of await this.engine.listIds(workspace)) {
      const key = { workspace, sessionId };
      try {
        if (this.engine.scanEntries !== undefined) {
          const end = await this.engine.scanEntries(key, {
            afterSeq: 0,
            needles: ['"blob"'],
            visit: (e) => {
              for (const r of blobRefsOf(e)) refs.add(r.sha256);
              return true;
            },
          });
          if (end.damaged) return `session ${quote(sessionId)} is damaged`;
        } else {
          for (const e of (await this.engine.load(key)).entries()) {
            for (const r of blobRefsOf(e)) refs.add(r.sha256);
          }
        }
      } catch (err) {
        // Deleted meanwhile: its references are gone with it.
        if (isSessiondError(err, "NOT_FOUND")) continue;
        return `session ${quote(sessionId)} could not be read (${(err as Error).message})`;
      }
    }
    return refs;
  }
}
