import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type GetEntriesResponse,
  GetEntriesResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";

/**
 * GetEntries fills a page up to a byte budget as well as up to its limit:
 * a page of 100 entries of 80 KB is 8 MB, twice the default largest
 * response, and every reader that starts at the beginning of such a session
 * failed. The entries the store read are encoded one by one, in the call's
 * codec, and the page ends before the entry that would pass the budget (the
 * first entry is always sent, so a reader always moves on; one entry larger
 * than the largest response still fails, RESOURCE_EXHAUSTED, as before).
 * For binary codecs the response carries the entries already encoded, as raw
 * fields (protobuf-es writes `$unknown` verbatim, and field 1 with these
 * bytes is what encoding `entries` would give), so sizing costs no second
 * encoding; JSON codecs get the plain message, sized by each entry's JSON.
 */

/** Room for head_seq (tag + a 10-byte varint) and slack. */
export const ENTRIES_RESERVE_BYTES = 32;

/** One entry as field 1 of GetEntriesResponse's value: length prefix, then the entry. */
function fieldValue(e: Entry): Uint8Array {
  return new BinaryWriter().bytes(toBinary(EntrySchema, e)).finish();
}

export function entriesResponse(
  entries: readonly Entry[],
  headSeq: number,
  budget: number,
  json: boolean,
): GetEntriesResponse {
  if (json) {
    let used = 0;
    let count = 0;
    for (const e of entries) {
      // +1: the comma between array elements.
      used += Buffer.byteLength(toJsonString(EntrySchema, e)) + 1;
      if (count > 0 && used > budget) break;
      count++;
    }
    return create(GetEntriesResponseSchema, {
      entries: entries.slice(0, count) as Entry[],
      headSeq: BigInt(headSeq),
    });
  }
  const fields: { no: number; wireType: WireType; data: Uint8Array }[] = [];
  let used = 0;
  for (const e of entries) {
    const data = fieldValue(e);
    used += 1 + data.length; // the tag of field 1 is one byte
    if (fields.length > 0 && used > budget) break;
    fields.push({ no: 1, wireType: WireType.LengthDelimited, data });
  }
  const response = create(GetEntriesResponseSchema, { headSeq: BigInt(headSeq) });
  response.$unknown = fields;
  return response;
}
