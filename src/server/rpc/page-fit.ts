import { type DescMessage, type MessageShape, toBinary, toJsonString } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/**
 * Pages filled up to a byte budget as well as up to a count (GetEntries,
 * ListSessions, SearchEntries): a page of 100 items picked by count can be
 * many times the largest response when the items are big. The items are
 * sized in the call's codec, one by one, and the page ends before the item
 * that would pass the budget (the first item always goes, so a reader always
 * moves on). For binary codecs the sizes come from the encodings that are
 * then sent: the response carries the items as raw fields (protobuf-es
 * writes `$unknown` verbatim, and a repeated field's elements written this
 * way are what encoding the field would give), so fitting costs no second
 * encoding. JSON codecs get plain messages, sized by each item's JSON.
 */

/** A repeated message field's elements, already encoded, as protobuf-es keeps unknown fields. */
export interface RawField {
  no: number;
  wireType: WireType;
  data: Uint8Array;
}

export interface Fitted {
  /** How many of the items fit (at least one when there was one). */
  count: number;
  /** Binary codecs: the items that fit, as fields `fieldNo` to put in `$unknown`. */
  fields: RawField[];
}

/**
 * Fits `items` (messages of `schema`, elements of field `fieldNo`) into
 * `budget` bytes. `encoded` may memoize an item's encoding (its length
 * prefix included) for items the store hands out unchanged.
 */
export function fitItems<D extends DescMessage>(
  schema: D,
  fieldNo: number,
  items: readonly MessageShape<D>[],
  budget: number,
  json: boolean,
  encoded: (item: MessageShape<D>) => Uint8Array = (item) => lengthPrefixed(schema, item),
): Fitted {
  const fields: RawField[] = [];
  let used = 0;
  let count = 0;
  for (const item of items) {
    // JSON: +1 for the comma between array elements.
    const data = json ? undefined : encoded(item);
    used +=
      data === undefined
        ? Buffer.byteLength(toJsonString(schema, item)) + 1
        : tagBytes(fieldNo) + data.length;
    if (count > 0 && used > budget) break;
    if (data !== undefined) fields.push({ no: fieldNo, wireType: WireType.LengthDelimited, data });
    count++;
  }
  return { count, fields };
}

/** An item as the value of a length-delimited field: its length, then its bytes. */
export function lengthPrefixed<D extends DescMessage>(
  schema: D,
  item: MessageShape<D>,
): Uint8Array {
  return new BinaryWriter().bytes(toBinary(schema, item)).finish();
}

function tagBytes(fieldNo: number): number {
  return fieldNo < 16 ? 1 : 2;
}
