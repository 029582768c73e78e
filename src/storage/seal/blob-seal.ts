import { dataLoss } from "../../core/errors.js";
import { associatedData, open, SEAL_OVERHEAD, sealBytes } from "./aead.js";

/**
 * A blob's sealed stored form (SPEC §12). Blobs are shared by the sessions
 * of a workspace (content-addressed, deduplicated), so they are sealed
 * under a workspace-level blob data key, not a session's. The blob keeps
 * its name, the SHA-256 of its PLAINTEXT, so dedup and GetBlob by hash
 * work as before; the hash is in the associated data, so sealed bytes
 * copied under another hash (or workspace) do not open.
 *
 * The file is a header and segments of 64 KiB of plaintext, each sealed on
 * its own (aead.ts: format, nonce, ciphertext, tag; 29 bytes added), so a
 * range read opens only the segments it covers:
 *
 *   "SDB1" | seg 0 | seg 1 | ... | seg n-1
 *   AD of seg i = ("sessiond/blob/1", workspace, sha256, i, "last" | "more")
 *
 * The last segment says it is the last: a file cut at a segment boundary
 * fails to open instead of reading as a shorter blob. An empty blob is one
 * empty segment. Sizes follow from the file's size alone (no index).
 *
 * Uploads in progress (chunked PutBlob) are sealed as they arrive: the
 * upload file is a run of records, one per chunk, each
 * [4-byte big-endian plaintext length][sealed chunk], AD =
 * ("sessiond/blob-upload/1", workspace, sha256, offset). A torn last
 * record (a crash in an append) is not counted and is written over.
 */

export const BLOB_SEGMENT = 64 * 1024;
const HEADER = Buffer.from("SDB1");
const DOMAIN = "sessiond/blob/1";
const UPLOAD_DOMAIN = "sessiond/blob-upload/1";
const SEALED_SEGMENT = BLOB_SEGMENT + SEAL_OVERHEAD;

/** Bytes of the sealed file of a blob of `size` bytes. */
export function sealedFileSize(size: number): number {
  const segments = Math.max(1, Math.ceil(size / BLOB_SEGMENT));
  return HEADER.length + size + segments * SEAL_OVERHEAD;
}

/** The plaintext size of a sealed blob file of `fileSize` bytes; undefined when no blob has that size. */
export function plainSizeOf(fileSize: number): number | undefined {
  const rest = fileSize - HEADER.length;
  if (rest < SEAL_OVERHEAD) return undefined;
  const segments = Math.ceil(rest / SEALED_SEGMENT);
  const size = rest - segments * SEAL_OVERHEAD;
  return sealedFileSize(size) === fileSize ? size : undefined;
}

function segmentAd(workspace: string, sha256: string, i: number, last: boolean): Buffer {
  return associatedData([DOMAIN, workspace, sha256, String(i), last ? "last" : "more"]);
}

/**
 * Seals a blob as it streams by: `push` plaintext in order (of `size`
 * bytes in all), get the file's bytes back as they are made.
 */
export class BlobSealer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;
  private seen = 0;
  private started = false;

  constructor(
    private readonly key: Uint8Array,
    private readonly workspace: string,
    private readonly sha256: string,
    private readonly size: number,
  ) {}

  /** The sealed bytes ready after `chunk` (the header first). */
  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      out.push(HEADER);
    }
    this.seen += chunk.length;
    if (this.seen > this.size) throw new Error("more bytes than the blob's size");
    this.pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= BLOB_SEGMENT && !this.lastSegmentPending()) {
      out.push(this.sealNext(BLOB_SEGMENT));
    }
    if (this.seen === this.size) {
      while (this.pendingBytes > BLOB_SEGMENT) out.push(this.sealNext(BLOB_SEGMENT));
      out.push(this.sealNext(this.pendingBytes, true));
    }
    return out;
  }

  /** The pending bytes hold the blob's end: its last segment waits for `seen === size`. */
  private lastSegmentPending(): boolean {
    return this.seen === this.size && this.pendingBytes <= BLOB_SEGMENT;
  }

  private sealNext(n: number, last = false): Buffer {
    const all = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    const plain = (all as Buffer).subarray(0, n);
    const rest = (all as Buffer).subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    const isLast = last || (this.seen === this.size && rest.length === 0);
    return sealBytes(this.key, plain, segmentAd(this.workspace, this.sha256, this.index++, isLast));
  }
}

/** The sealed file of a whole blob. */
export function sealBlob(key: Uint8Array, workspace: string, sha256: string, data: Uint8Array) {
  const sealer = new BlobSealer(key, workspace, sha256, data.length);
  return Buffer.concat(sealer.push(data));
}

/** Where the segments covering plaintext [offset, offset + length) are in the file. */
export function segmentSpan(
  offset: number,
  length: number,
  size: number,
): { first: number; last: number; fileStart: number; fileEnd: number } | undefined {
  const end = Math.min(size, offset + length);
  if (offset >= end) return undefined;
  const first = Math.floor(offset / BLOB_SEGMENT);
  const last = Math.floor((end - 1) / BLOB_SEGMENT);
  const fileStart = HEADER.length + first * SEALED_SEGMENT;
  const lastPlain = Math.min(BLOB_SEGMENT, size - last * BLOB_SEGMENT);
  const fileEnd = HEADER.length + last * SEALED_SEGMENT + lastPlain + SEAL_OVERHEAD;
  return { first, last, fileStart, fileEnd };
}

/**
 * Plaintext [offset, offset + length) of a sealed blob of `size` bytes,
 * given the file bytes `segmentSpan` named. DATA_LOSS naming the blob when
 * a segment does not open (another key, hash or workspace, altered, cut).
 */
export function openSegments(
  key: Uint8Array,
  workspace: string,
  sha256: string,
  size: number,
  bytes: Buffer,
  offset: number,
  length: number,
): Buffer {
  const span = segmentSpan(offset, length, size);
  if (span === undefined) return Buffer.alloc(0);
  const total = Math.max(1, Math.ceil(size / BLOB_SEGMENT));
  const parts: Buffer[] = [];
  for (let i = span.first; i <= span.last; i++) {
    const at = (i - span.first) * SEALED_SEGMENT;
    const plain = Math.min(BLOB_SEGMENT, size - i * BLOB_SEGMENT);
    const sealed = bytes.subarray(at, at + plain + SEAL_OVERHEAD);
    const opened = open(key, sealed, segmentAd(workspace, sha256, i, i === total - 1));
    if (opened === undefined || opened.length !== plain) {
      throw dataLoss(
        `blob ${sha256} in workspace ${JSON.stringify(workspace)} does not open at segment ${i}: its sealed content fails authentication (moved from another blob or workspace, altered, cut, or sealed under another key)`,
      );
    }
    parts.push(opened);
  }
  const all = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  const from = offset - span.first * BLOB_SEGMENT;
  return all.subarray(from, from + Math.min(length, size - offset));
}

/** One record of a sealed upload: the chunk at `offset`. */
export function sealUploadChunk(
  key: Uint8Array,
  workspace: string,
  sha256: string,
  offset: number,
  data: Uint8Array,
): Buffer {
  const sealed = sealBytes(
    key,
    data,
    associatedData([UPLOAD_DOMAIN, workspace, sha256, String(offset)]),
  );
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(data.length, 0);
  return Buffer.concat([head, sealed]);
}

/** Bytes of an upload record holding `n` bytes of plaintext. */
export function uploadRecordSize(n: number): number {
  return 4 + n + SEAL_OVERHEAD;
}

/** The chunk of a sealed upload record's sealed part; DATA_LOSS when it does not open. */
export function openUploadChunk(
  key: Uint8Array,
  workspace: string,
  sha256: string,
  offset: number,
  sealed: Buffer,
): Buffer {
  const opened = open(
    key,
    sealed,
    associatedData([UPLOAD_DOMAIN, workspace, sha256, String(offset)]),
  );
  if (opened === undefined) {
    throw dataLoss(
      `the upload of blob ${sha256} in workspace ${JSON.stringify(workspace)} does not open at offset ${offset}`,
    );
  }
  return opened;
}
