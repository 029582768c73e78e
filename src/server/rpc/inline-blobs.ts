import type { ContentPart, Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessionState, StateMessage } from "../../../gen/sessiond/v1/session_pb.js";
import { resolvedPart, withContent } from "../../core/blob-parts.js";
import type { BlobStore } from "../../store/index.js";

/**
 * `inline_blobs` of GetState and GetEntries: blob references put back into
 * the parts they stand for, as far as a page's byte budget allows, so that
 * a reader of a big session makes one call per page instead of one more per
 * blob. The page is sized with the blobs' sizes first (the references say
 * them), then the blobs are read. The store's objects are shared and never
 * changed: inlined messages and entries are copies.
 */

/** A blob over this share of the budget stays a reference: a page must still hold one item. */
export function inlineLimit(budget: number): number {
  return Math.floor(budget / 2);
}

/** Bytes an encoding adds per inlined part (tags, lengths), and JSON's base64 / escaping. */
const PART_OVERHEAD = 16;
const JSON_FACTOR = 1.4;

/** What inlining the blobs of `parts` adds to their encoded size (0 without any). */
export function inlineExtra(parts: readonly ContentPart[], limit: number, json: boolean): number {
  let extra = 0;
  for (const p of parts) {
    if (p.part.case !== "blob") continue;
    const size = Number(p.part.value.size);
    if (size <= limit) extra += (json ? size * JSON_FACTOR : size) + PART_OVERHEAD;
  }
  return extra;
}

/** `parts` with their blobs (of at most `limit` bytes) inlined; the same array when none is. */
async function inlined(
  blobs: BlobStore,
  workspace: string,
  parts: ContentPart[],
  limit: number,
): Promise<ContentPart[]> {
  let out = parts;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as ContentPart;
    if (p.part.case !== "blob" || Number(p.part.value.size) > limit) continue;
    const data = await blobs.content(workspace, p.part.value);
    if (data === undefined) continue; // the caller's GetBlob then says what is wrong
    try {
      const part = resolvedPart(p.part.value, data);
      if (out === parts) out = parts.slice();
      out[i] = part;
    } catch {
      // Not the part it claims (text that is not UTF-8): left a reference.
    }
  }
  return out;
}

/** A state page with the blobs of its messages inlined (copies where anything changed). */
export async function inlineState(
  blobs: BlobStore,
  workspace: string,
  state: SessionState,
  limit: number,
): Promise<SessionState> {
  let messages = state.messages;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as StateMessage;
    if (m.message === undefined) continue;
    const content = await inlined(blobs, workspace, m.message.content, limit);
    if (content === m.message.content) continue;
    if (messages === state.messages) messages = messages.slice();
    messages[i] = { ...m, message: { ...m.message, content } };
  }
  return messages === state.messages ? state : { ...state, messages };
}

/**
 * The first entries of a page that fit `budget` with their blobs inlined
 * (one at least), inlined. `sizeOf` is an entry's encoded size as it is.
 */
export async function inlineEntries(
  blobs: BlobStore,
  workspace: string,
  entries: readonly Entry[],
  budget: number,
  json: boolean,
  sizeOf: (e: Entry) => number,
): Promise<Entry[]> {
  const limit = inlineLimit(budget);
  const out: Entry[] = [];
  let used = 0;
  for (const e of entries) {
    const parts = e.kind.case === "message" ? e.kind.value.content : undefined;
    used += sizeOf(e) + (parts === undefined ? 0 : inlineExtra(parts, limit, json));
    if (out.length > 0 && used > budget) break;
    if (parts === undefined) {
      out.push(e);
      continue;
    }
    const content = await inlined(blobs, workspace, parts, limit);
    out.push(content === parts ? e : withContent(e, content));
  }
  return out;
}
