/**
 * Test support for blobs through the store (src/store/blobs*.test.ts):
 * content and its SHA-256, message entries of given parts, the references
 * a stored entry holds. (An engine with some members replaced, for the
 * paths a real engine takes only by accident: with-members.ts.)
 */
import { createHash } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type BlobRef,
  type ContentPart,
  type ContentPartSchema,
  type Entry,
  EntrySchema,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";
import { resolvedPart } from "../../src/core/blob-parts.js";
import type { BlobStore } from "../../src/store/blobs.js";

export const KB = 1024;
export const MB = 1024 * KB;

/** A blob's name: the SHA-256 of its content, lower-case hex. */
export function sha(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** `size` bytes of a pattern `seed` picks (different seeds, different content). */
export function bytes(size: number, seed: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * 131 + seed) & 0xff;
  return b;
}

export type PartInit = MessageInitShape<typeof ContentPartSchema>["part"];

/** A user message entry of these parts. */
export function message(id: string, parts: PartInit[]): Entry {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: { role: Role.USER, content: parts.map((part) => ({ part })) },
    },
  });
}

/** An image part of these bytes (images become blobs whatever their content). */
export function image(data: Uint8Array, mimeType = "image/png"): PartInit {
  return { case: "image", value: { mimeType, data } };
}

export function partsOf(e: Entry | undefined): ContentPart[] {
  if (e?.kind.case !== "message") throw new Error("not a message");
  return e.kind.value.content;
}

export function refOf(p: ContentPart | undefined): BlobRef {
  if (p?.part.case !== "blob") throw new Error(`not a blob reference: ${p?.part.case}`);
  return p.part.value;
}

/** A blob's whole content, read back in GetBlob's chunks. */
export async function readAll(blobs: BlobStore, ws: string, sha256: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of blobs.read(ws, sha256, 0, 0)) chunks.push(c.data);
  return new Uint8Array(Buffer.concat(chunks));
}

/** The part a reference stands for, read back through the store. */
export async function resolve(blobs: BlobStore, ws: string, ref: BlobRef): Promise<ContentPart> {
  return resolvedPart(ref, await readAll(blobs, ws, ref.sha256));
}
