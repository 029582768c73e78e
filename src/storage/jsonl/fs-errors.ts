import * as path from "node:path";
import { type ErrorCode, isSessiondError, SessiondError } from "../../core/errors.js";
import { errnoCode } from "./fs-ops.js";

/**
 * The one place where a file-system error of the JSONL engine becomes a
 * SessiondError. The code tells a client whether retrying can help:
 *
 * - FAILED_PRECONDITION: the data directory itself is wrong (permissions,
 *   a read-only mount, a file where a directory belongs). Every retry fails
 *   the same way until the operator fixes it.
 * - RESOURCE_EXHAUSTED: the disk or the quota is full. Not retried
 *   automatically either (a retry loop only adds load); it succeeds once
 *   space is freed.
 * - UNAVAILABLE, for everything else: EIO (outcome unknown), EMFILE /
 *   ENFILE and EAGAIN (descriptors or memory free up as calls finish), and
 *   any code not listed here.
 *
 * Messages are for clients: what was being done, the problem in plain
 * words, the errno code and the path relative to the data directory (no
 * host paths, no stack).
 */

interface Problem {
  readonly code: ErrorCode;
  readonly words: string;
}

const PROBLEMS: Readonly<Record<string, Problem>> = {
  EACCES: { code: "FAILED_PRECONDITION", words: "permission denied" },
  EPERM: { code: "FAILED_PRECONDITION", words: "operation not permitted" },
  EROFS: { code: "FAILED_PRECONDITION", words: "the file system is read-only" },
  ENOTDIR: { code: "FAILED_PRECONDITION", words: "a part of the path is not a directory" },
  EISDIR: { code: "FAILED_PRECONDITION", words: "a directory is in the way" },
  ENAMETOOLONG: { code: "FAILED_PRECONDITION", words: "the path is too long" },
  ELOOP: { code: "FAILED_PRECONDITION", words: "too many symbolic links" },
  ENOSPC: { code: "RESOURCE_EXHAUSTED", words: "no space left on the device" },
  EDQUOT: { code: "RESOURCE_EXHAUSTED", words: "disk quota exceeded" },
  EFBIG: { code: "RESOURCE_EXHAUSTED", words: "the file is too large" },
  EIO: { code: "UNAVAILABLE", words: "I/O error" },
  EMFILE: { code: "UNAVAILABLE", words: "too many open files" },
  ENFILE: { code: "UNAVAILABLE", words: "too many open files in the system" },
};

/** What a data directory needs before a FAILED_PRECONDITION can go away. */
const FIX = "the server's data directory must be fixed";

/** The code and the plain words for an fs error (UNAVAILABLE for anything unlisted). */
export function fsProblem(err: unknown): Problem & { readonly errno: string } {
  const errno = errnoCode(err) ?? (err instanceof Error ? err.message : String(err));
  return { errno, ...(PROBLEMS[errno] ?? { code: "UNAVAILABLE", words: "file-system error" }) };
}

/**
 * A SessiondError as is; any other (fs) error as the SessiondError of its
 * errno (table above), e.g. `creating session "x" failed: permission denied
 * (EACCES on default/sessions); the server's data directory must be fixed`.
 * `note` ends the message ("outcome unknown" after a failed write).
 */
export function ioError(err: unknown, doing: string, dataDir: string, note?: string) {
  if (isSessiondError(err)) return err;
  const p = fsProblem(err);
  const where = relativePath(err, dataDir);
  const notes = [p.code === "FAILED_PRECONDITION" ? FIX : undefined, note].filter(Boolean);
  const tail = notes.length > 0 ? `; ${notes.join("; ")}` : "";
  const message = `${doing} failed: ${p.words} (${p.errno}${where ? ` on ${where}` : ""})${tail}`;
  return new SessiondError(p.code, message, { cause: err });
}

/** The error's path relative to the data dir ("." for the dir itself); undefined outside it. */
function relativePath(err: unknown, dataDir: string): string | undefined {
  const p = (err as { path?: unknown } | null)?.path;
  if (typeof p !== "string") return undefined;
  const rel = path.relative(dataDir, path.resolve(p));
  if (rel === "") return ".";
  const outside = rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
  return outside ? undefined : rel;
}
