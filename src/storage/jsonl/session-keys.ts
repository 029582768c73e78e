import { randomBytes } from "node:crypto";
import { rename as fsRename } from "node:fs/promises";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EntrySchema, type Withheld, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { failedPrecondition, isSessiondError } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { withheldMarker, withhold } from "../../core/withheld.js";
import type { SessionKey } from "../engine.js";
import type { KeyProvider, WrappedKey } from "../keys/key-provider.js";
import { newKey } from "../seal/aead.js";
import {
  type ContentOpener,
  MissingKey,
  SessionSealer,
  sealedBounds,
} from "../seal/sealed-payload.js";
import { CheckpointOpener, checkpointPath, removeCheckpoint } from "./checkpoint.js";
import { createExclusive, makeNameDurable } from "./create-file.js";
import { errnoCode, type FsOps, fsyncDir, readAt, writeAll } from "./fs-ops.js";
import { readStamped, registerLoaded, stampOf } from "./key-fence.js";
import { checkFrame, decodePayload } from "./record.js";

/**
 * Which workspaces the JSONL engine seals, and with what keys (see
 * seal/ and keys/). Every session created in such a workspace gets a random
 * 256-bit data key, kept wrapped by the workspace's key in a key file
 * beside its log:
 *
 *   <dataDir>/<workspace>/sessions/<id>.key            (subagents/<id>.key)
 *   {"format":"sessiond-session-key","version":1,"workspace":"w","sessionId":"s",
 *    "keyId":"w","keyVersion":1,"wrapped":"<base64>"}
 *
 * Why a file of its own rather than the log's first record: erasing a
 * session (issue 41, part 2) destroys its data key, and destroying this
 * small file (unlink, directory fsync) does that without rewriting the
 * log; a rotation's rewrap replaces it (temp file, fsync, rename,
 * directory fsync) without touching a record either. It is written
 * durably before the log exists (a log is never sealed under a key that a
 * crash could lose); a key file left without a log by a crash is used
 * again by the retried create, or stays unused.
 */
export interface EncryptionOptions {
  /** Where workspace keys come from: a LocalKeyring, or a KMS behind the same interface. */
  readonly keys: KeyProvider;
  /** The workspaces whose new sessions are sealed: "all", or names. */
  readonly workspaces: "all" | readonly string[];
}

/** How one session's payloads are sealed and opened. */
export interface SessionKeying {
  /** Seals what is written; undefined: the session is in clear. */
  readonly sealer: SessionSealer | undefined;
  /** Opens what is read (a sealer, or an opener that says why there is no key). */
  readonly opener: ContentOpener;
  /** The session was erased (its key file is a tombstone): the marker its sealed entries read with. */
  readonly erased?: Withheld;
}

/**
 * The opener of an erased session: its data key is destroyed, so a sealed
 * content reads as what the erasure kept of it (core/withheld.ts's
 * `withhold`: a message's role, tool call ids and names, model, usage...),
 * written into the tombstone before the key went; `{}` for an entry the
 * tombstone keeps nothing of (erased before tombstones kept anything, or
 * a record that did not open). The record decoder (record.ts) marks the
 * entry with `erased`.
 */
export class ErasedKey implements ContentOpener {
  constructor(
    readonly erased: Withheld,
    /** What the erasure kept, by seq: the entry id and kind it belongs to, and the kind's value JSON. */
    private readonly kept: ReadonlyMap<number, Kept> = new Map(),
  ) {}
  open(entryId: string, seq: number, kind: string): string {
    const k = this.kept.get(seq);
    return k !== undefined && k.id === entryId && k.kind === kind ? k.value : "{}";
  }
}

/** What an erasure kept of one sealed entry (in the tombstone). */
interface Kept {
  readonly id: string;
  readonly kind: string;
  /** The kind's value as canonical JSON, content withheld. */
  readonly value: string;
}

const FORMAT = "sessiond-session-key";

interface KeyFile {
  format: typeof FORMAT;
  version: 1;
  workspace: string;
  sessionId: string;
  keyId: string;
  keyVersion: number;
  wrapped: string;
  /** Set on an erasure tombstone, which holds no key (keyId, keyVersion, wrapped absent). */
  erased?: { at: string; by: string; why: string };
  /**
   * On a tombstone: what the erasure kept of each sealed entry (by seq),
   * as `withhold` keeps it for an entry in clear: structure, no content.
   * Absent on tombstones of erasures before it existed (their entries read
   * with empty kinds).
   */
  kept?: Record<string, { id: string; kind: string; value: unknown }>;
}

/** What a key file holds: a wrapped key, or the erasure that destroyed it. */
type StoredKey =
  | { wrapped: WrappedKey; stamp: string; erased?: undefined }
  | { erased: Withheld; kept: ReadonlyMap<number, Kept>; wrapped?: undefined };

/** The key file of the session whose log is `logFile`. */
export function keyPath(logFile: string): string {
  return logFile.replace(/\.jsonl$/, ".key");
}

export class SessionKeys {
  private readonly sealed: ReadonlySet<string> | "all" | undefined;

  constructor(
    private readonly ops: FsOps,
    private readonly o: EncryptionOptions | undefined,
    private readonly sync: boolean,
  ) {
    const w = o?.workspaces;
    this.sealed = w === undefined ? undefined : w === "all" ? "all" : new Set(w);
  }

  /** True when a key provider is configured (sealed sessions can be opened). */
  get encrypts(): boolean {
    return this.o !== undefined;
  }

  /** True when new sessions of `workspace` are sealed. */
  seals(workspace: string): boolean {
    return this.sealed === "all" || (this.sealed?.has(workspace) ?? false);
  }

  /**
   * For a new session: in a sealed workspace, a data key made, wrapped and
   * written durably to the key file (or the one a crashed create left
   * there, taken again); else clear.
   */
  async create(key: SessionKey, logFile: string): Promise<SessionKeying> {
    const provider = this.o?.keys;
    if (provider === undefined || !this.seals(key.workspace)) return this.keyingOf(key, undefined);
    const file = keyPath(logFile);
    const dataKey = newKey();
    const wrapped = await provider.wrap(key.workspace, dataKey, contextOf(key));
    try {
      await createExclusive(this.ops, file, key.sessionId, encodeKeyFile(key, wrapped), this.sync);
    } catch (err) {
      if (!isSessiondError(err, "ALREADY_EXISTS")) throw err;
      if (this.sync) await makeNameDurable(this.ops, file);
      return this.open(key, logFile);
    }
    const sealer = new SessionSealer(key.workspace, key.sessionId, dataKey);
    registerLoaded(sealer, {
      file,
      stamp: stampOf(await this.ops.stat(file)),
      key,
      dataKey,
      provider,
    });
    return this.keyingOf(key, sealer);
  }

  /**
   * For an existing session: its key file read and unwrapped, or clear when
   * it has none. With `checkpoint` (a log about to be read whole), the
   * opener of a sealed session starts reading its checkpoint
   * (checkpoint.ts) and opens from it what it holds.
   */
  async open(
    key: SessionKey,
    logFile: string,
    opts: { checkpoint?: boolean } = {},
  ): Promise<SessionKeying> {
    const provider = this.o?.keys;
    // Without keys no key file is looked for: a sealed record says it cannot be opened.
    if (provider === undefined) {
      return {
        sealer: undefined,
        opener: new MissingKey(
          key.workspace,
          key.sessionId,
          "no keyring is configured (serve --keyring FILE)",
        ),
      };
    }
    const found = await this.readFile(key, keyPath(logFile));
    if (found === undefined) return this.keyingOf(key, undefined);
    if (found.erased !== undefined) {
      return {
        sealer: undefined,
        opener: new ErasedKey(found.erased, found.kept),
        erased: found.erased,
      };
    }
    const stored = found.wrapped;
    const dataKey = await provider.unwrap(stored, contextOf(key));
    const sealer = new SessionSealer(key.workspace, key.sessionId, dataKey);
    registerLoaded(sealer, {
      file: keyPath(logFile),
      stamp: found.stamp,
      key,
      dataKey: Buffer.from(dataKey),
      provider,
    });
    if (opts.checkpoint === true) {
      return {
        sealer,
        opener: new CheckpointOpener(sealer, this.ops, checkpointPath(logFile), key),
      };
    }
    return this.keyingOf(key, sealer);
  }

  /**
   * Wraps the session's data key again under its workspace key's current
   * version (after a rotation), replacing the key file; no record changes.
   * Returns the version it was and is now wrapped under, or undefined for
   * a session in clear.
   */
  async rewrap(
    key: SessionKey,
    logFile: string,
  ): Promise<{ from: number; to: number } | undefined> {
    const provider = this.o?.keys;
    const file = keyPath(logFile);
    const stored = await this.read(key, file);
    if (stored === undefined) return undefined;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const current = await provider.currentVersion(stored.keyId);
    if (current === stored.version) return { from: current, to: current };
    const dataKey = await provider.unwrap(stored, contextOf(key));
    const wrapped = await provider.wrap(stored.keyId, dataKey, contextOf(key));
    await this.replace(file, key.sessionId, encodeKeyFile(key, wrapped));
    return { from: stored.version, to: wrapped.version };
  }

  /**
   * Erasure of a sealed session: its key file replaced by a tombstone that
   * holds no key material (temp file, fsync, rename over, directory fsync),
   * so that no key opens its records again. The caller holds the
   * session's lock. Returns "clear" when the session has no key file (in
   * clear: the caller rewrites its log instead), "erased" when it was
   * erased already (nothing written: the first tombstone stays),
   * "destroyed" when this call destroyed the key.
   */
  async destroy(
    key: SessionKey,
    logFile: string,
    marker: Withheld,
  ): Promise<"clear" | "erased" | "destroyed"> {
    const file = keyPath(logFile);
    const found = await this.readFile(key, file);
    if (found === undefined) return "clear";
    if (found.erased !== undefined) return "erased";
    // What readers keep of each entry (role, tool call ids, ...), taken while the key still opens it.
    const provider = this.o?.keys;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const dataKey = await provider.unwrap(found.wrapped, contextOf(key));
    const kept = await keptOf(
      this.ops,
      logFile,
      new SessionSealer(key.workspace, key.sessionId, dataKey),
      marker,
    );
    const tombstone: KeyFile = {
      format: FORMAT,
      version: 1,
      workspace: key.workspace,
      sessionId: key.sessionId,
      erased: {
        at: (marker.at === undefined ? new Date() : timestampDate(marker.at)).toISOString(),
        by: marker.by,
        why: marker.why,
      },
      kept,
    } as KeyFile;
    await this.replace(file, key.sessionId, Buffer.from(`${JSON.stringify(tombstone)}\n`));
    return "destroyed";
  }

  /** True when the session's key file is an erasure tombstone. */
  async isErased(key: SessionKey, logFile: string): Promise<boolean> {
    return (await this.readFile(key, keyPath(logFile)))?.erased !== undefined;
  }

  /** After the session's log is deleted: its checkpoint and key file go too (durably). */
  async remove(logFile: string, sessionId: string): Promise<void> {
    await removeCheckpoint(this.ops, logFile, sessionId, !this.sync);
    const file = keyPath(logFile);
    try {
      await this.ops.unlink(file);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return;
      throw err;
    }
    if (this.sync) await fsyncDir(this.ops, path.dirname(file));
  }

  private keyingOf(key: SessionKey, sealer: SessionSealer | undefined): SessionKeying {
    if (sealer !== undefined) return { sealer, opener: sealer };
    return {
      sealer: undefined,
      opener: new MissingKey(
        key.workspace,
        key.sessionId,
        `its key file is missing (${key.sessionId}.key)`,
      ),
    };
  }

  /** The key file's wrapped key, or undefined when there is none (or it was erased). */
  private async read(key: SessionKey, file: string): Promise<WrappedKey | undefined> {
    const found = await this.readFile(key, file);
    return found?.wrapped;
  }

  /** What the key file holds, or undefined when there is none. */
  private async readFile(key: SessionKey, file: string): Promise<StoredKey | undefined> {
    const read = await readStamped(this.ops, file);
    if (read === undefined) return undefined;
    const text = read.text;
    const name = `the key file of session ${quote(key.sessionId)} in workspace ${quote(key.workspace)}`;
    let k: Partial<KeyFile>;
    try {
      k = JSON.parse(text) as Partial<KeyFile>;
    } catch {
      throw failedPrecondition(`${name} is malformed (not JSON)`);
    }
    if (k.format === FORMAT && k.erased !== undefined) {
      if (k.workspace !== key.workspace || k.sessionId !== key.sessionId) {
        throw failedPrecondition(`${name} belongs to another session`);
      }
      const e = k.erased;
      const at = new Date(String(e.at));
      return {
        kept: keptMap(k.kept),
        erased: withheldMarker(
          WithheldReason.ERASED,
          String(e.by ?? ""),
          timestampFromDate(Number.isNaN(at.getTime()) ? new Date(0) : at),
          String(e.why ?? ""),
        ),
      };
    }
    if (
      k.format !== FORMAT ||
      typeof k.keyId !== "string" ||
      typeof k.keyVersion !== "number" ||
      typeof k.wrapped !== "string"
    ) {
      throw failedPrecondition(`${name} is malformed`);
    }
    if (k.workspace !== key.workspace || k.sessionId !== key.sessionId) {
      throw failedPrecondition(
        `${name} belongs to session ${quote(String(k.sessionId))} in workspace ${quote(String(k.workspace))}`,
      );
    }
    return {
      wrapped: { keyId: k.keyId, version: k.keyVersion, wrapped: k.wrapped },
      stamp: read.stamp,
    };
  }

  /** Temp file, fsync, rename over, directory fsync. */
  private async replace(file: string, sessionId: string, content: Buffer): Promise<void> {
    const dir = path.dirname(file);
    const temp = path.join(dir, `.tmp-${sessionId}-${randomBytes(6).toString("hex")}`);
    // rename is optional in FsOps (a test's file system may lack it): node's then.
    const ops = this.ops as { rename?: (from: string, to: string) => Promise<void> };
    const rename = ops.rename?.bind(this.ops) ?? fsRename;
    const fd = await this.ops.open(temp, "wx");
    try {
      await writeAll(this.ops, fd, content, 0);
      if (this.sync) await this.ops.fsync(fd);
    } finally {
      await this.ops.close(fd);
    }
    try {
      await rename(temp, file);
    } catch (err) {
      await this.ops.unlink(temp).catch(() => undefined);
      throw err;
    }
    if (this.sync) await fsyncDir(this.ops, dir);
  }
}

function contextOf(key: SessionKey): Record<string, string> {
  return { workspace: key.workspace, session: key.sessionId };
}

function encodeKeyFile(key: SessionKey, w: WrappedKey): Buffer {
  const content: KeyFile = {
    format: FORMAT,
    version: 1,
    workspace: key.workspace,
    sessionId: key.sessionId,
    keyId: w.keyId,
    keyVersion: w.version,
    wrapped: w.wrapped,
  };
  return Buffer.from(`${JSON.stringify(content)}\n`);
}

/**
 * What an erasure keeps of each sealed record of the log `file`, opened
 * with `sealer` (the key about to be destroyed): `withhold(entry, marker)`'s
 * kind value, the structure an entry in clear keeps when erased, so that
 * CONTEXT keeps roles and tool-call pairing. Records that do not open keep
 * nothing.
 */
async function keptOf(
  ops: FsOps,
  file: string,
  sealer: SessionSealer,
  marker: Withheld,
): Promise<NonNullable<KeyFile["kept"]>> {
  const out: NonNullable<KeyFile["kept"]> = {};
  let fd: number;
  try {
    fd = await ops.open(file, "r");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return out;
    throw err;
  }
  let bytes: Buffer;
  try {
    bytes = await readAt(ops, fd, 0, (await ops.fstat(fd)).size);
  } finally {
    await ops.close(fd);
  }
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) break;
    const frame = checkFrame(bytes, start, nl);
    start = nl + 1;
    if (typeof frame === "string") continue;
    if (sealedBounds(bytes, frame.start, frame.end) === undefined) continue;
    const entry = decodePayload(bytes, frame, sealer);
    if (typeof entry === "string") continue;
    const kind = entry.kind.case;
    if (kind === undefined || kind === "sessionInfo" || kind === "leaf") continue;
    const json = JSON.parse(toJsonString(EntrySchema, withhold(entry, marker))) as Record<
      string,
      unknown
    >;
    out[String(frame.seq)] = { id: entry.id, kind, value: json[kind] ?? {} };
  }
  return out;
}

function keptMap(kept: KeyFile["kept"]): Map<number, Kept> {
  const out = new Map<number, Kept>();
  if (kept === null || typeof kept !== "object") return out;
  for (const [seq, k] of Object.entries(kept)) {
    if (k === null || typeof k !== "object" || typeof k.id !== "string") continue;
    if (typeof k.kind !== "string") continue;
    out.set(Number(seq), { id: k.id, kind: k.kind, value: JSON.stringify(k.value ?? {}) });
  }
  return out;
}
