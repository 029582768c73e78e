import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Withheld, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { dataLoss, failedPrecondition } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { withheldMarker } from "../../core/withheld.js";
import type { SessionKey } from "../engine.js";
import type { KeyProvider, WrappedKey } from "../keys/key-provider.js";
import { newKey } from "../seal/aead.js";
import {
  type ContentOpener,
  MissingKey,
  notOpened,
  SessionSealer,
  sealedTextBounds,
} from "../seal/sealed-payload.js";

/**
 * Encryption at rest on PostgreSQL: the JSONL engine's model (seal/,
 * keys/) with the wrapped data key in a row instead of a file. Each session
 * created in a sealed workspace gets a random 256-bit data key, wrapped by
 * its workspace's key through the KeyProvider and stored in
 * `sessiond_session_keys` (migration 11, one row per session, deleted with
 * it). Payloads are seal/'s sealed stored form: the structure (id, parent,
 * timestamp, seq, kind) in clear, the kind's content AES-256-GCM sealed
 * with (workspace, session, entry id, seq, kind) as associated data; the
 * row's own seq is what opening binds to, so a payload moved to another
 * row, entry or session fails to open (DATA_LOSS naming them).
 *
 * Erasure of a sealed session destroys its key: the row keeps no key
 * material (`wrapped` NULL) and says when and by whom (`erased`), and its
 * sealed payloads then read as the kind emptied with the ERASED marker.
 */
export interface PgEncryption {
  /** Where workspace keys come from: a LocalKeyring, or a KMS behind the same interface. */
  readonly keys: KeyProvider;
  /** The workspaces whose new sessions are sealed: "all", or names. */
  readonly workspaces: "all" | readonly string[];
}

/** How one session's payloads are sealed and opened. */
export interface Keying {
  /** Seals what is written; undefined: the session is in clear (or erased). */
  readonly sealer: SessionSealer | undefined;
  /** Opens what is read. */
  readonly opener: ContentOpener;
  /** The session was erased (its key destroyed): the marker its sealed entries read with. */
  readonly erased?: Withheld;
}

/** A session's row of sessiond_session_keys as queries select it (all null: no row). */
export interface KeyColumns {
  key_id: string | null;
  key_version: number | null;
  wrapped: string | null;
  erased: string | null;
}

/** What an erased session's sealed content opens to: nothing (the kind emptied). */
class ErasedOpener implements ContentOpener {
  constructor(readonly erased: Withheld) {}
  open(): string {
    return "{}";
  }
}

/** The keying of a session read without any key provider configured. */
export function noKeyring(key: SessionKey): Keying {
  return {
    sealer: undefined,
    opener: new MissingKey(
      key.workspace,
      key.sessionId,
      "no keyring is configured (serve --keyring FILE)",
    ),
  };
}

export class PgKeys {
  private readonly sealed: ReadonlySet<string> | "all" | undefined;
  /** Unwrapped keys by session and wrapped form (search opens many sessions' rows). */
  private readonly unwrapped = new Map<string, SessionSealer>();

  constructor(private readonly o: PgEncryption | undefined) {
    const w = o?.workspaces;
    this.sealed = w === undefined ? undefined : w === "all" ? "all" : new Set(w);
  }

  /** The key provider, when one is configured (blobs.ts wraps the blob data keys with it). */
  get provider(): KeyProvider | undefined {
    return this.o?.keys;
  }

  /** True when a key provider is configured (sealed sessions can be opened). */
  get encrypts(): boolean {
    return this.o !== undefined;
  }

  /** True when new sessions of `workspace` are sealed. */
  seals(workspace: string): boolean {
    return this.sealed === "all" || (this.sealed?.has(workspace) ?? false);
  }

  /** For a new session of a sealed workspace: a data key made and wrapped; else undefined. */
  async make(key: SessionKey): Promise<{ keying: Keying; wrapped: WrappedKey } | undefined> {
    const provider = this.o?.keys;
    if (provider === undefined || !this.seals(key.workspace)) return undefined;
    const dataKey = newKey();
    const wrapped = await provider.wrap(key.workspace, dataKey, contextOf(key));
    const sealer = new SessionSealer(key.workspace, key.sessionId, dataKey);
    return { keying: { sealer, opener: sealer }, wrapped };
  }

  /**
   * A new data key for `key`, wrapped by its workspace's current key version,
   * whether or not the workspace's new sessions are sealed (`sessiond seal`
   * seals the sessions of a workspace written before). FAILED_PRECONDITION
   * without a key provider.
   */
  async makeFor(key: SessionKey): Promise<{ keying: Keying; wrapped: WrappedKey }> {
    const provider = this.o?.keys;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const dataKey = newKey();
    const wrapped = await provider.wrap(key.workspace, dataKey, contextOf(key));
    const sealer = new SessionSealer(key.workspace, key.sessionId, dataKey);
    return { keying: { sealer, opener: sealer }, wrapped };
  }

  /**
   * `keys rewrap`: a data key wrapped under `row`'s version wrapped again
   * under the current version of its key id; `row` itself when it is current.
   */
  async rewrapped(key: SessionKey, row: WrappedKey): Promise<WrappedKey> {
    const provider = this.o?.keys;
    if (provider === undefined) throw failedPrecondition("no keyring is configured");
    const current = await provider.currentVersion(row.keyId);
    if (current === row.version) return row;
    const dataKey = await provider.unwrap(row, contextOf(key));
    return provider.wrap(row.keyId, dataKey, contextOf(key));
  }

  /**
   * Forgets the unwrapped keys of a session (its key was destroyed): this
   * process keeps no copy of a data key after the erasure it hears of.
   */
  forget(key: SessionKey): void {
    const prefix = `${key.workspace}\n${key.sessionId}\n`;
    for (const memo of this.unwrapped.keys())
      if (memo.startsWith(prefix)) this.unwrapped.delete(memo);
  }

  /** The unwrapped key kept under `memo`, made the most recently used. */
  private recent(memo: string): SessionSealer | undefined {
    const sealer = this.unwrapped.get(memo);
    if (sealer !== undefined) {
      this.unwrapped.delete(memo);
      this.unwrapped.set(memo, sealer);
    }
    return sealer;
  }

  /**
   * keyingOf's answer when it needs no unwrapping (the key is unwrapped
   * already, or there is none to unwrap); undefined when it does. A search
   * asks this of hundreds of sessions: awaiting keyingOf for each costs a
   * turn of the microtask queue apiece.
   */
  knownKeying(key: SessionKey, row: KeyColumns | undefined): Keying | undefined {
    if (this.o?.keys === undefined || row?.erased != null) return undefined;
    if (row?.wrapped == null || row.key_id === null || row.key_version === null) return undefined;
    const sealer = this.recent(memoOf(key, row));
    return sealer === undefined ? undefined : { sealer, opener: sealer };
  }

  /** The keying of a stored session, from its key row's columns. */
  async keyingOf(key: SessionKey, row: KeyColumns | undefined): Promise<Keying> {
    const provider = this.o?.keys;
    if (provider === undefined) return noKeyring(key);
    if (row?.erased != null) {
      // Destroyed (by any replica): no copy of the key stays in this process.
      this.forget(key);
      const erased = markerOf(row.erased);
      return { sealer: undefined, opener: new ErasedOpener(erased), erased };
    }
    if (row?.wrapped == null || row.key_id === null || row.key_version === null) {
      // In clear: a sealed payload here has lost its key row.
      return {
        sealer: undefined,
        opener: new MissingKey(
          key.workspace,
          key.sessionId,
          "its data key is missing (no row in sessiond_session_keys)",
        ),
      };
    }
    const memo = memoOf(key, row);
    let sealer = this.recent(memo);
    if (sealer === undefined) {
      const wrapped = { keyId: row.key_id, version: row.key_version, wrapped: row.wrapped };
      const dataKey = await provider.unwrap(wrapped, contextOf(key));
      sealer = new SessionSealer(key.workspace, key.sessionId, dataKey);
      // The least recently used goes (a Map iterates in insertion order).
      if (this.unwrapped.size >= MAX_UNWRAPPED) {
        const oldest = this.unwrapped.keys().next().value;
        if (oldest !== undefined) this.unwrapped.delete(oldest);
      }
      this.unwrapped.set(memo, sealer);
    }
    return { sealer, opener: sealer };
  }
}

/** Where an unwrapped key is kept: the session and the wrapped key it came from. */
function memoOf(key: SessionKey, row: KeyColumns): string {
  return `${key.workspace}\n${key.sessionId}\n${row.key_id}\n${row.key_version}\n${row.wrapped}`;
}

/**
 * Unwrapped data keys kept, least recently used dropped first: a search
 * uses the key of every sealed session it looks through, and a KMS unwrap
 * is a network call. At 1,024 (emptied when full, before), a search over
 * 2,000 sealed sessions unwrapped every key again each time: 230-330 ms a
 * search against 22-57 ms with all kept (local keyring, loaded box). A
 * kept key costs about a kilobyte (the sealer, its derived keys and
 * cipher contexts).
 */
const MAX_UNWRAPPED = 16_384;

/** The `erased` column of a destroyed key: when, by whom, why (no key material). */
export function erasedColumn(marker: Withheld): string {
  const at = marker.at === undefined ? new Date() : timestampDate(marker.at);
  return JSON.stringify({ at: at.toISOString(), by: marker.by, why: marker.why });
}

function markerOf(column: string): Withheld {
  let e: { at?: unknown; by?: unknown; why?: unknown } = {};
  try {
    e = JSON.parse(column) as typeof e;
  } catch {
    // A damaged note still means erased: the key is gone either way.
  }
  const at = new Date(String(e.at));
  return withheldMarker(
    WithheldReason.ERASED,
    String(e.by ?? ""),
    timestampFromDate(Number.isNaN(at.getTime()) ? new Date(0) : at),
    String(e.why ?? ""),
  );
}

function contextOf(key: SessionKey): Record<string, string> {
  return { workspace: key.workspace, session: key.sessionId };
}

/** The sealed stored form of a payload (canonical JSON) under `keying`, or the same text. */
export function sealed(json: string, keying: Keying | undefined): string {
  return keying?.sealer === undefined ? json : keying.sealer.sealPayload(json);
}

/**
 * The canonical JSON of a stored payload: itself when in clear, else its
 * content opened (bound to the row's `seq`). DATA_LOSS naming the
 * workspace, session, entry and seq when it does not open;
 * FAILED_PRECONDITION when there is no key to try.
 */
export function openPayload(
  key: SessionKey,
  seq: number,
  payload: string,
  keying: Keying | undefined,
): string {
  const b = sealedTextBounds(payload);
  if (b === undefined) return payload;
  const head = payload.slice(0, b.valueStart);
  const kind = /"([A-Za-z]+)":$/.exec(head)?.[1] ?? "";
  // Our writers put the id first, and ids hold no quote or escape (core/ids.ts);
  // anything else is damage, and the opening fails below naming the seq.
  const id = head.startsWith('{"id":"') ? head.slice(7, head.indexOf('"', 7)) : "";
  const sealedText = payload.slice(b.sealedStart, b.sealedEnd);
  const content = (keying ?? noKeyring(key)).opener.open(id, seq, kind, sealedText);
  if (content === undefined) {
    throw dataLoss(
      `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)} is corrupt at seq ${seq}: ${notOpened(id, seq)}`,
    );
  }
  return `${head}${content}}`;
}

/** True when a stored payload is sealed (its kind's value is `{"@sealed":"…"}`). */
export function isSealed(payload: string): boolean {
  return sealedTextBounds(payload) !== undefined;
}

/** The erasure marker of an erased session's sealed payload, else undefined. */
export function erasedMarkOf(payload: string, keying: Keying | undefined): Withheld | undefined {
  if (keying?.erased === undefined) return undefined;
  return sealedTextBounds(payload) !== undefined ? keying.erased : undefined;
}

/** FAILED_PRECONDITION for an append to an erased sealed session. */
export function erasedRefusal(key: SessionKey): Error {
  return failedPrecondition(
    `session ${quote(key.sessionId)} in workspace ${quote(key.workspace)} was erased: it takes no more entries`,
  );
}
