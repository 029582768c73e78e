import { hkdfSync } from "node:crypto";
import { failedPrecondition } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { associatedData, KEY_BYTES, open, seal, sealBytes } from "./aead.js";

/**
 * An entry's stored form when its session is sealed: the canonical JSON
 * (`toJsonString`) with the structure in clear and the kind's content
 * sealed in its place:
 *
 *   {"id":"e1","parentId":"e0","timestamp":"…","seq":"5","message":{"@sealed":"<base64>"}}
 *
 * id, parent, timestamp, seq and the kind's name stay readable, so the
 * reader indexes a sealed file as it indexes a clear one (trees, paging,
 * listings work without keys). The base64 is aead.ts's form of the kind's
 * content JSON (`{"role":"ROLE_USER","content":[…]}`), bound to
 * (workspace, session id, entry id, seq, kind): a sealed content copied to
 * another entry, session, seq or kind fails to open.
 *
 * SessionInfo, Leaf and Label entries stay in clear: titles, tags and
 * metadata are what listings filter on, and a Leaf or a Label is a pointer
 * (plus a label's name) the log indexes when it loads.
 *
 * "@sealed" cannot be a proto JSON field name, so a clear entry never has
 * this form; a payload whose kind value is exactly `{"@sealed":"…"}` is
 * sealed and never decoded as anything else.
 */

/**
 * Where an entry's associated data is laid out, reused by every sealer of
 * the process: seal and open hand it to setAAD, which reads it at once
 * (one allocation less per sealed append; an entry's is ~100 bytes, a
 * larger one is allocated).
 */
const adScratch = Buffer.allocUnsafe(1024);

/** The kinds whose content is sealed (by their proto JSON names). */
export const SEALED_KINDS: ReadonlySet<string> = new Set([
  "message",
  "modelChange",
  "thinkingLevelChange",
  "compaction",
  "branchSummary",
  "custom",
]);

/** What the associated data of an entry's content starts with (a version of this scheme). */
const DOMAIN = "sessiond/entry-content/1";
/** What the associated data of a checkpoint segment starts with (jsonl/checkpoint.ts). */
const CHECKPOINT_DOMAIN = "sessiond/checkpoint-segment/1";
const SEALED_KEY = '{"@sealed":"';
/** What a sealed kind's value starts with, as bytes; `"}}` ends it. */
export const SEALED_OPEN = Buffer.from(SEALED_KEY);
const SEQ_KEY = ',"seq":"';

/** Opens the sealed content of entries of one session (a key, or why there is none). */
export interface ContentOpener {
  /**
   * The content JSON of the kind, or undefined when it does not open (it
   * was sealed for another place or key, or altered: the caller reports
   * DATA_LOSS naming the entry). Throws FAILED_PRECONDITION when there is
   * no key to try.
   */
  open(entryId: string, seq: number, kind: string, sealed: string): string | undefined;
}

/** Why a sealed content did not open (the reason of a DATA_LOSS naming the entry). */
export function notOpened(entryId: string, seq: number): string {
  return `entry ${quote(entryId)} (seq ${seq}) does not open: its sealed content fails authentication (moved from another entry, session or seq, altered, or sealed under another data key)`;
}

/** One session's data key at work: seals the payloads it writes and opens those it reads. */
export class SessionSealer implements ContentOpener {
  constructor(
    readonly workspace: string,
    readonly sessionId: string,
    private readonly key: Uint8Array,
  ) {
    if (key.length !== KEY_BYTES) throw new Error(`a data key has ${KEY_BYTES} bytes`);
    this.place = associatedData([DOMAIN, workspace, sessionId]);
  }

  /** The session's part of every entry's associated data, made once. */
  private readonly place: Buffer;

  /**
   * The sealed stored form of an entry's canonical JSON; the same text for
   * the kinds that stay in clear (and an entry without kind).
   */
  sealPayload(canonical: string): string {
    const parts = this.sealParts(canonical);
    return parts === undefined ? canonical : `${parts.head}${SEALED_KEY}${parts.sealed}"}}`;
  }

  /**
   * `sealPayload` in its two pieces, for a writer that lays them out in
   * its own buffer (jsonl record.ts): the stored form is `head`, then
   * `{"@sealed":"`, the base64 `sealed` (ASCII), then `"}}`. Undefined for
   * the kinds that stay in clear (the stored form is `canonical` itself).
   * Why not the string: joining the pieces and encoding the join to UTF-8
   * again cost 2-4 µs a sealed entry (a loop of seals, 700-byte messages).
   */
  sealParts(canonical: string): { head: string; sealed: string } | undefined {
    const parts = splitCanonical(canonical);
    if (parts === undefined || !SEALED_KINDS.has(parts.kind)) return undefined;
    const content = canonical.slice(parts.valueStart, canonical.length - 1);
    const sealed = seal(this.key, content, this.ad(parts.entryId, parts.seq, parts.kind));
    return { head: canonical.slice(0, parts.valueStart), sealed };
  }

  open(entryId: string, seq: number, kind: string, sealed: string): string | undefined {
    return open(this.key, sealed, this.ad(entryId, String(seq), kind))?.toString("utf8");
  }

  /**
   * A key for another use of this session's secrets (HKDF-SHA256 of the
   * data key, with the workspace and session in its info): it goes with
   * the data key (erasing the session destroys both) and differs per session.
   */
  derive(purpose: string, bytes: number): Buffer {
    const info = associatedData([purpose, this.workspace, this.sessionId]);
    return Buffer.from(hkdfSync("sha256", this.key, Buffer.alloc(0), info, bytes));
  }

  /**
   * A segment of the session's checkpoint (jsonl/checkpoint.ts), holding
   * the opened contents of seqs `first`..`last`, sealed under the data key
   * and bound to (workspace, session, first, last): a segment copied to
   * another session, or given another range, fails to open.
   */
  sealSegment(first: number, last: number, plaintext: Uint8Array): Buffer {
    return sealBytes(this.key, plaintext, this.segmentAd(first, last));
  }

  /** What `sealSegment` sealed for this session and range, or undefined when it does not open. */
  openSegment(first: number, last: number, sealed: Uint8Array): Buffer | undefined {
    return open(this.key, sealed, this.segmentAd(first, last));
  }

  private segmentAd(first: number, last: number): Buffer {
    return associatedData([
      CHECKPOINT_DOMAIN,
      this.workspace,
      this.sessionId,
      String(first),
      String(last),
    ]);
  }

  private ad(entryId: string, seq: string, kind: string): Buffer {
    return associatedData([entryId, seq, kind], this.place, adScratch);
  }
}

/**
 * For a session whose entries are sealed when no key can open them: every
 * open fails with FAILED_PRECONDITION (the operator must supply the key;
 * nothing is lost), naming the workspace, the session and the entry.
 */
export class MissingKey implements ContentOpener {
  constructor(
    private readonly workspace: string,
    private readonly sessionId: string,
    /** Why there is no key, e.g. "no keyring is configured (serve --keyring)". */
    private readonly why: string,
  ) {}

  open(entryId: string, seq: number): string {
    throw failedPrecondition(
      `session ${quote(this.sessionId)} in workspace ${quote(this.workspace)} is encrypted (entry ${quote(entryId)}, seq ${seq}) but ${this.why}`,
    );
  }
}

/** Where the parts of the canonical JSON of an entry are. */
interface CanonicalParts {
  readonly entryId: string;
  readonly seq: string;
  readonly kind: string;
  /** Index where the kind's value starts (it runs to the last character but one). */
  readonly valueStart: number;
}

/**
 * Splits the canonical JSON our writers make: `{"id":"…",…,"seq":"N",`
 * then fields outside the kind (`withheld`), then `"<kind>":<value>}`, the
 * kind last (ids and timestamps hold no quote). Undefined for an entry
 * without kind.
 */
function splitCanonical(text: string): CanonicalParts | undefined {
  if (!text.startsWith('{"id":"')) throw new Error("not an entry's canonical JSON");
  const idEnd = text.indexOf('"', 7);
  const seqAt = text.indexOf(SEQ_KEY, idEnd);
  if (seqAt < 0) throw new Error("not an entry's canonical JSON (no seq)");
  const digits = seqAt + SEQ_KEY.length;
  const digitsEnd = text.indexOf('"', digits);
  let at = digitsEnd + 1;
  while (text.charCodeAt(at) === 0x2c) {
    const keyEnd = text.indexOf('"', at + 2);
    const key = text.slice(at + 2, keyEnd);
    const valueStart = keyEnd + 2;
    if (ALL_KINDS.has(key)) {
      return {
        entryId: text.slice(7, idEnd),
        seq: text.slice(digits, digitsEnd),
        kind: key,
        valueStart,
      };
    }
    at = valueEnd(text, valueStart);
  }
  return undefined;
}

const ALL_KINDS: ReadonlySet<string> = new Set([...SEALED_KINDS, "sessionInfo", "label", "leaf"]);

/** The index just past the JSON value starting at `at` (strings with escapes, nesting). */
function valueEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22)
        i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      if (depth === 0) return i + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (c === 0x2c && depth === 0) return i;
  }
  return text.length;
}

/** Where a sealed payload keeps its content: the base64's bounds in the buffer. */
export interface SealedBounds {
  /** Where the kind's value (`{"@sealed":…`) starts. */
  readonly valueStart: number;
  readonly sealedStart: number;
  readonly sealedEnd: number;
}

const QUOTE = 0x22;
const CLOSE = 0x7d;

/**
 * The bounds of the sealed content of the payload `buf[start, end)`, or
 * undefined when the payload is not sealed. Sealed means: it ends with
 * `{"@sealed":"<no quote>"}}`, which in JSON can only be the value of a
 * top-level key, the kind (a quote inside a string is escaped, and base64
 * holds no brace or quote).
 */
export function sealedBounds(buf: Buffer, start: number, end: number): SealedBounds | undefined {
  if (end - start < SEALED_OPEN.length + 4) return undefined;
  if (buf[end - 1] !== CLOSE || buf[end - 2] !== CLOSE || buf[end - 3] !== QUOTE) return undefined;
  // The base64 holds no quote, so the quote before the closing one is the
  // last byte of `{"@sealed":"`: one look back to the nearest quote, which
  // in a clear payload ending in `"}}` is a few bytes away (a search for
  // the whole mark went back through every such payload). Within the
  // payload only: `buf` may be a whole file.
  const found = buf.subarray(start, end - 3).lastIndexOf(QUOTE);
  const at = start + found + 1 - SEALED_OPEN.length;
  if (found < 0 || at < start) return undefined;
  for (let i = 0; i < SEALED_OPEN.length; i++) {
    if (buf[at + i] !== SEALED_OPEN[i]) return undefined;
  }
  return { valueStart: at, sealedStart: at + SEALED_OPEN.length, sealedEnd: end - 3 };
}

/**
 * `sealedBounds` over a payload held as a string (PostgreSQL's rows): the
 * same test, in string indexes, without encoding the payload to bytes.
 * Everything before the sealed value is sliced as text, and the base64 is
 * ASCII, so the slices are the same text as the byte version's.
 */
export function sealedTextBounds(text: string): SealedBounds | undefined {
  const end = text.length;
  if (end < SEALED_KEY.length + 4) return undefined;
  if (
    text.charCodeAt(end - 1) !== CLOSE ||
    text.charCodeAt(end - 2) !== CLOSE ||
    text.charCodeAt(end - 3) !== QUOTE
  ) {
    return undefined;
  }
  // As in sealedBounds: the quote before the closing one ends the mark.
  const at = text.lastIndexOf('"', end - 4) + 1 - SEALED_KEY.length;
  if (at < 0 || !text.startsWith(SEALED_KEY, at)) return undefined;
  return { valueStart: at, sealedStart: at + SEALED_KEY.length, sealedEnd: end - 3 };
}
