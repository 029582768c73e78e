import type { Stats } from "node:fs";

/**
 * What a stat says about a session file, as the listing caches compare it
 * (numbers, not strings: a listing compares 10,000 of them).
 *
 * - Its IDENTITY: which file this is. A session file is append-only, so
 *   its first line (the root) is fixed for as long as the same file exists;
 *   a file deleted and created again under the same name is another file.
 *   Inode and birth time tell them apart (an inode number is reused, a
 *   birth time with it is not). Where the file system gives no birth time
 *   (0), identity falls back to the state below: stricter, so a root is
 *   read again after every append instead of trusted wrongly.
 * - Its STATE: which version of the file. Every append grows the size and
 *   moves the mtime, a repair truncates it (and moves the mtime), so inode,
 *   size and mtime change whenever the listing record may have changed.
 */
export interface FileKey {
  readonly ino: number;
  /** Birth time in ms, 0 when the file system gives none. */
  readonly birth: number;
  readonly size: number;
  readonly mtime: number;
}

/** The key of the file `st` describes. */
export function keyOf(st: Stats): FileKey {
  return { ino: st.ino, birth: st.birthtimeMs, size: st.size, mtime: st.mtimeMs };
}

/** `st` describes the file `k` was taken of (maybe grown since). */
export function sameFile(k: FileKey, st: Stats): boolean {
  if (k.ino !== st.ino) return false;
  return k.birth > 0 ? k.birth === st.birthtimeMs : sameState(k, st);
}

/** `st` describes the file `k` was taken of, unchanged since. */
export function sameState(k: FileKey, st: Stats): boolean {
  return k.ino === st.ino && k.size === st.size && k.mtime === st.mtimeMs;
}
