/**
 * A copy of a message whose maps (and google.protobuf.Struct fields, which
 * are maps on the wire) hold their keys in sorted order, so that `toBinary`
 * writes the same bytes as the other languages' deterministic serializers
 * (Go's `Deterministic`, Java's `useDeterministicSerialization`, Python's
 * `deterministic=True` all sort map keys). protobuf-es has no such option:
 * it writes maps in the object's key order, which is the order the server's
 * answer had. The copy goes through proto JSON with sorted object keys.
 * Caveat: JavaScript orders integer-like keys ("2", "10") numerically before
 * the others, whatever the insertion order; the vectors use no such keys.
 */
import {
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";

function sortKeys(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === "object") {
    const out: { [k: string]: JsonValue } = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k] as JsonValue);
    return out;
  }
  return v;
}

export function canonicalCopy<D extends DescMessage>(
  schema: D,
  msg: MessageShape<D>,
): MessageShape<D> {
  return fromJson(schema, sortKeys(toJson(schema, msg)));
}
