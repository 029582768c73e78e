import { create } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type GetEntriesResponse,
  GetEntriesResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { fitItems } from "./page-fit.js";

/**
 * GetEntries fills a page up to a byte budget as well as up to its limit
 * (page-fit.ts): a page of 100 entries of 80 KB is 8 MB, twice the default
 * largest response, and every reader that starts at the beginning of such a
 * session failed. One entry larger than the largest response still fails,
 * RESOURCE_EXHAUSTED, as before.
 */

/** Room for head_seq (tag + a 10-byte varint) and slack. */
export const ENTRIES_RESERVE_BYTES = 32;

export function entriesResponse(
  entries: readonly Entry[],
  headSeq: number,
  budget: number,
  json: boolean,
): GetEntriesResponse {
  const fit = fitItems(EntrySchema, 1, entries, budget, json);
  if (json) {
    return create(GetEntriesResponseSchema, {
      entries: entries.slice(0, fit.count) as Entry[],
      headSeq: BigInt(headSeq),
    });
  }
  const response = create(GetEntriesResponseSchema, { headSeq: BigInt(headSeq) });
  response.$unknown = fit.fields;
  return response;
}
