/**
 * The blob half of the storage contract (`StorageEngine.blobs`): large
 * content parts stored once per workspace, content-addressed by SHA-256
 * (see BlobRef in the proto). Engines store and hand out bytes; the store
 * (src/store/blobs.ts) hashes, decides what becomes a blob, checks uploads
 * and collects garbage. Rules every engine keeps:
 *
 * - `put` and a completing `commitUpload` resolve only once the blob is
 *   durable, so an entry appended after them never references a blob a
 *   crash can lose;
 * - a blob is never half there: readers see all of it or none (temp +
 *   rename on files, one transaction in SQL);
 * - every use of a blob (`put` of one that exists, `stat` with touch)
 *   records the time, and `delete` removes only a blob untouched since a
 *   given time: a garbage collection that judged a blob unreferenced
 *   never removes one that an append began to use since.
 */

/** A stored blob or an unfinished upload, for garbage collection and fsck. */
export interface BlobInfo {
  readonly sha256: string;
  /** Bytes held: the blob's size, or what an upload has received so far. */
  readonly size: number;
  /** When it was last stored, uploaded to or used (ms since the epoch). */
  readonly touchedMs: number;
  /** An upload not completed yet (never referenced: nothing may name it). */
  readonly upload: boolean;
}

export interface BlobStorage {
  /**
   * The size of a stored blob; undefined when the workspace has none with
   * that hash. With `touch`, records the use (now) when it exists.
   */
  stat(workspace: string, sha256: string, touch: boolean): Promise<number | undefined>;

  /**
   * Stores a whole blob durably (the caller checked that `data` hashes to
   * `sha256`). One that exists already is only touched.
   */
  put(workspace: string, sha256: string, data: Uint8Array): Promise<void>;

  /** `length` bytes from `offset` (fewer at the end); NOT_FOUND when absent. */
  read(workspace: string, sha256: string, offset: number, length: number): Promise<Uint8Array>;

  /** Bytes an unfinished upload holds (0 when there is none). */
  uploaded(workspace: string, sha256: string): Promise<number>;

  /**
   * Adds a chunk at `offset` of an upload, which must equal `uploaded()`
   * (the store checked); the new count of bytes held. Durable only when
   * committed.
   */
  appendUpload(
    workspace: string,
    sha256: string,
    offset: number,
    data: Uint8Array,
  ): Promise<number>;

  /**
   * Makes a complete upload the blob, durably, if its content hashes to
   * `sha256`: `verify` gets the bytes in order and says. On a mismatch the
   * upload is removed and false returned.
   */
  commitUpload(
    workspace: string,
    sha256: string,
    verify: (chunks: AsyncIterable<Uint8Array>) => Promise<boolean>,
  ): Promise<boolean>;

  /** Every blob and unfinished upload of a workspace, unordered. */
  /**
   * OPTIONAL (engines that seal blobs): erasure of a whole workspace
   * destroys its blob data key and removes its sealed blobs, which no key
   * opens any more (SPEC §12). Idempotent.
   */
  destroyKey?(workspace: string): Promise<{ destroyed: boolean; blobs: number }>;

  list(workspace: string): Promise<BlobInfo[]>;

  /**
   * Removes a blob (`upload` false) or an unfinished upload (true) unless it
   * was touched at or after `untouchedBeforeMs`; true when removed.
   */
  delete(
    workspace: string,
    sha256: string,
    upload: boolean,
    untouchedBeforeMs: number,
  ): Promise<boolean>;
}
