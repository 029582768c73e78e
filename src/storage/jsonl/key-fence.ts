import type { Stats } from "node:fs";
import { failedPrecondition, unavailable } from "../../core/errors.js";
import type { SessionKey } from "../engine.js";
import type { KeyProvider, WrappedKey } from "../keys/key-provider.js";
import type { SessionSealer } from "../seal/sealed-payload.js";
import { closeQuietly, errnoCode, type FsOps, readAt } from "./fs-ops.js";

/**
 * The key fence: several processes on one JSONL data dir (a second
 * server, an embedded store, the CLI) and erasure. A process that loaded a
 * sealed session holds its data key (in its SessionSealer); when another
 * process erases the session (its <id>.key replaced by a tombstone,
 * session-keys.ts `destroy`, under the session's lease), the first one
 * must not go on appending records sealed under the destroyed key.
 *
 * `fenceKey(ops, sealer, name)` compares the key file's identity now (one
 * stat: inode, size, mtime, ctime) with the one its sealer was loaded
 * from. Unchanged: nothing to do (the usual case: one stat). Changed:
 * the file is read again; a wrapped key that unwraps to the same data key
 * (a `keys rewrap` by another process) is taken as the new identity and
 * the append goes on; a tombstone is FAILED_PRECONDITION "was erased (by
 * another process): it takes no more entries"; a key file gone or another
 * key is UNAVAILABLE "reloaded, retry". On either refusal the caller drops
 * its state of the file (FileState.reset) so that the next load reads the
 * key file again (and then reads the session as erased).
 *
 * Where it goes (jsonl session-file.ts, `commit`): under the lease, after
 * prepareWrite and the `state.erased` check, before the records are
 * encoded and written. An erasure takes the same lease, so a check made
 * under the lease holds until the lease is given up; a batch that took
 * the lease anew must check; one that kept it since the last check need
 * not, and does not (SessionFile.fenceHolds: the lease's acquisition count
 * and the sealer are those of the last check, the lease not lost): a
 * sequential writer pays the stat once per holding of the lock, not per
 * append.
 */

/** What a sealer was loaded from, to tell a replaced key file. */
interface Loaded {
  readonly file: string;
  stamp: string;
  readonly key: SessionKey;
  readonly dataKey: Buffer;
  readonly provider: KeyProvider;
}

const loadedFrom = new WeakMap<SessionSealer, Loaded>();

/** The identity of a file's version: a replacement (rename over, rewrite) changes it. */
export function stampOf(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** Records where `sealer`'s data key came from (session-keys.ts, when it loads or makes one). */
export function registerLoaded(sealer: SessionSealer, loaded: Loaded): void {
  loadedFrom.set(sealer, loaded);
}

/** A key file's text and the identity of the version read (one open: no race between them). */
export async function readStamped(
  ops: FsOps,
  file: string,
): Promise<{ text: string; stamp: string } | undefined> {
  let fd: number;
  try {
    fd = await ops.open(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
  try {
    const st = await ops.fstat(fd);
    return { text: (await readAt(ops, fd, 0, st.size)).toString("utf8"), stamp: stampOf(st) };
  } finally {
    await closeQuietly(ops, fd);
  }
}

/**
 * Throws when the session's key file is no longer the one `sealer` was
 * loaded from, unless it still holds the same data key (see above).
 * Nothing to check for a session in clear (`sealer` undefined) or a
 * sealer this module does not know.
 */
export async function fenceKey(
  ops: FsOps,
  sealer: SessionSealer | undefined,
  name: string,
): Promise<void> {
  const loaded = sealer === undefined ? undefined : loadedFrom.get(sealer);
  if (loaded === undefined) return;
  let st: Stats | undefined;
  try {
    st = await ops.stat(loaded.file);
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw err;
  }
  if (st !== undefined && stampOf(st) === loaded.stamp) return;
  const now = await readStamped(ops, loaded.file);
  if (now === undefined) {
    throw unavailable(
      `${name}: its key file is gone (deleted by another process?); reloaded, retry`,
    );
  }
  let k: { erased?: unknown; keyId?: unknown; keyVersion?: unknown; wrapped?: unknown };
  try {
    k = JSON.parse(now.text) as typeof k;
  } catch {
    throw unavailable(`${name}: its key file changed and is malformed; reloaded, retry`);
  }
  if (k.erased !== undefined) {
    throw failedPrecondition(`${name} was erased (by another process): it takes no more entries`);
  }
  if (
    typeof k.keyId === "string" &&
    typeof k.keyVersion === "number" &&
    typeof k.wrapped === "string"
  ) {
    const wrapped: WrappedKey = { keyId: k.keyId, version: k.keyVersion, wrapped: k.wrapped };
    const dataKey = await loaded.provider
      .unwrap(wrapped, { workspace: loaded.key.workspace, session: loaded.key.sessionId })
      .catch(() => undefined);
    if (dataKey !== undefined && Buffer.from(dataKey).equals(loaded.dataKey)) {
      loaded.stamp = now.stamp; // rewrapped: the same data key
      return;
    }
  }
  throw unavailable(`${name}: its key file was replaced by another process; reloaded, retry`);
}
