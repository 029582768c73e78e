import { create } from "@bufbuild/protobuf";
import {
  BlobPart,
  type BlobRef,
  BlobRefSchema,
  type ContentPart,
  ContentPartSchema,
  type Entry,
} from "../../gen/sessiond/v1/entry_pb.js";

/**
 * Content parts and the blobs that stand in for them (BlobRef in the
 * proto): what of a part becomes the blob, what the reference keeps, and
 * how a reference and its bytes give the part back, the same part byte for
 * byte. Pure and browser-safe: the store uses it to take parts out of
 * entries, the clients to put them back.
 */

/** A blob's name: the SHA-256 of its content, lower-case hex. */
export const SHA256_PATTERN = /^[0-9a-f]{64}$/;

/** media_type of the blob of a text or thinking part. */
export const TEXT_MEDIA_TYPE = "text/plain; charset=utf-8";

/** Characters of a text blob that its reference keeps as a preview. */
export const BLOB_PREVIEW_CHARS = 200;

/** Bytes of UTF-8 a preview can need at most (4 per code point). */
export const BLOB_PREVIEW_MAX_BYTES = BLOB_PREVIEW_CHARS * 4;

const encoder = new TextEncoder();

/** What of a content part would be a blob: its bytes and what the reference must keep. */
export interface BlobContent {
  readonly part: BlobPart;
  readonly bytes: Uint8Array;
  readonly mediaType: string;
  readonly signature?: string | undefined;
}

/**
 * The big content of a part (text, thinking, image data) when it is over
 * `thresholdBytes`; undefined for a smaller one and for a tool call or a
 * reference. A string of n UTF-16 units takes at most 3n UTF-8 bytes, so
 * the common small text is judged without encoding it.
 */
export function blobContentOf(p: ContentPart, thresholdBytes: number): BlobContent | undefined {
  const k = p.part;
  switch (k.case) {
    case "text":
      if (k.value.length * 3 <= thresholdBytes) return undefined;
      return textContent(BlobPart.TEXT, k.value, thresholdBytes);
    case "thinking":
      if (k.value.thinking.length * 3 <= thresholdBytes) return undefined;
      return textContent(BlobPart.THINKING, k.value.thinking, thresholdBytes, k.value.signature);
    case "image":
      if (k.value.data.length <= thresholdBytes) return undefined;
      return { part: BlobPart.IMAGE, bytes: k.value.data, mediaType: k.value.mimeType };
    default:
      return undefined;
  }
}

function textContent(
  part: BlobPart,
  text: string,
  thresholdBytes: number,
  signature?: string,
): BlobContent | undefined {
  const bytes = encoder.encode(text);
  if (bytes.length <= thresholdBytes) return undefined;
  return { part, bytes, mediaType: TEXT_MEDIA_TYPE, signature };
}

/** The first BLOB_PREVIEW_CHARS characters (code points) of a text. */
export function blobPreview(text: string): string {
  if (text.length <= BLOB_PREVIEW_CHARS) return text;
  let end = 0;
  for (let n = 0; n < BLOB_PREVIEW_CHARS && end < text.length; n++) {
    const c = text.codePointAt(end) as number;
    end += c > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}

/** The preview of a text blob from its first bytes (a cut character at the end is dropped). */
export function previewOfBytes(head: Uint8Array): string {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(head);
  // A multi-byte character cut at the end of `head` decodes as U+FFFD.
  return blobPreview(text.endsWith("\uFFFD") ? text.slice(0, -1) : text);
}

/** A content part that references a blob. */
export function blobRefPart(content: BlobContent, sha256: string): ContentPart {
  return create(ContentPartSchema, {
    part: {
      case: "blob",
      value: create(BlobRefSchema, {
        sha256,
        size: BigInt(content.bytes.length),
        part: content.part,
        mediaType: content.mediaType,
        preview: content.part === BlobPart.IMAGE ? "" : previewOfBytes(head(content.bytes)),
        signature: content.signature,
      }),
    },
  });
}

function head(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(0, BLOB_PREVIEW_MAX_BYTES);
}

/**
 * The part a reference stands for, from the blob's bytes: the part that
 * was appended, field for field. INVALID_ARGUMENT-worthy bytes (text that
 * is not UTF-8) throw a TypeError: the store refuses such references.
 */
export function resolvedPart(ref: BlobRef, bytes: Uint8Array): ContentPart {
  switch (ref.part) {
    case BlobPart.TEXT:
      return create(ContentPartSchema, {
        part: { case: "text", value: new TextDecoder("utf-8", { fatal: true }).decode(bytes) },
      });
    case BlobPart.THINKING:
      return create(ContentPartSchema, {
        part: {
          case: "thinking",
          value: {
            thinking: new TextDecoder("utf-8", { fatal: true }).decode(bytes),
            signature: ref.signature,
          },
        },
      });
    case BlobPart.IMAGE:
      return create(ContentPartSchema, {
        part: { case: "image", value: { mimeType: ref.mediaType, data: bytes } },
      });
    default:
      throw new TypeError(`blob reference ${ref.sha256} names no part it stands for`);
  }
}

/**
 * A copy of a message entry with `content` in place of its parts (the entry
 * and its message are shared, read-only objects: never changed in place).
 */
export function withContent(entry: Entry, content: ContentPart[]): Entry {
  if (entry.kind.case !== "message") return entry;
  return { ...entry, kind: { case: "message", value: { ...entry.kind.value, content } } };
}

/** The parts of an entry that may hold blob references (a message's content), or undefined. */
function partsOf(entry: Entry): ContentPart[] | undefined {
  return entry.kind.case === "message" ? entry.kind.value.content : undefined;
}

/** Every blob reference of an entry. */
export function blobRefsOf(entry: Entry): BlobRef[] {
  const refs: BlobRef[] = [];
  for (const p of partsOf(entry) ?? []) if (p.part.case === "blob") refs.push(p.part.value);
  return refs;
}
