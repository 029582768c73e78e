import type { TreeNode } from "../../../gen/sessiond/v1/session_pb.js";

/**
 * GetTree and GetState fill each page up to the server's largest response
 * (`--max-message-bytes`, which connect-node enforces on the encoded
 * message): the pages are sized here, per codec, before anything is encoded.
 */

/**
 * Room kept for a response's fields outside its nodes or messages (leaf id,
 * head seq, a page token of at most 2 KiB, the framing of the state field).
 */
const RESERVE_BYTES = 4096;

/**
 * The items' budget of one page for a request's `max_response_bytes`: 0 is
 * the server's largest response, a larger value is capped at it, and the
 * room the response's other fields need (`reserve`) comes off. A page still
 * holds at least one item (the stores and page-fit.ts see to that).
 */
export function requestedBudget(
  maxResponseBytes: number,
  maxMessageBytes: number,
  reserve = RESERVE_BYTES,
): number {
  const limit =
    maxResponseBytes === 0 ? maxMessageBytes : Math.min(maxResponseBytes, maxMessageBytes);
  return Math.max(0, limit - reserve);
}

/** True when the call's codec is JSON (Connect or gRPC with +json), whose encoding is larger. */
export function isJsonCodec(contentType: string | null): boolean {
  return contentType === null || contentType.includes("json");
}

/**
 * Upper bound of a TreeNode's binary size inside the response: the node's
 * framing (tag + length), kind, seq, on_current_path, role and timestamp
 * at their largest, then per string field a tag and a length prefix.
 */
const BINARY_NODE_FIXED = 6 + 2 + 11 + 2 + 2 + 19;
const BINARY_STRING_FIXED = 6;

/**
 * Upper bound of a TreeNode's proto JSON size without its strings: every
 * key, the longest enum names, seq as a 16-digit string, a timestamp with
 * nanoseconds, the punctuation and the comma between array elements.
 */
const JSON_NODE_FIXED = 256;

function binaryString(s: string | undefined): number {
  return s === undefined ? 0 : BINARY_STRING_FIXED + Buffer.byteLength(s);
}

function jsonString(s: string | undefined): number {
  return s === undefined ? 0 : Buffer.byteLength(JSON.stringify(s));
}

/**
 * The size of a tree node as the codec will send it, never less than that:
 * exact for the strings (UTF-8 bytes, JSON escapes), bounded for the rest.
 * Cheaper than encoding every node twice.
 */
export function treeNodeSize(json: boolean): (node: TreeNode) => number {
  return json
    ? (n) =>
        JSON_NODE_FIXED +
        jsonString(n.id) +
        jsonString(n.parentId) +
        jsonString(n.label) +
        jsonString(n.preview) +
        jsonString(n.leafId)
    : (n) =>
        BINARY_NODE_FIXED +
        binaryString(n.id) +
        binaryString(n.parentId) +
        binaryString(n.label) +
        binaryString(n.preview) +
        binaryString(n.leafId);
}
