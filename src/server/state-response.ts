import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type SessionState, SessionStateSchema } from "../../gen/sessiond/v1/session_pb.js";
import {
  type GetStateResponse,
  GetStateResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";

/** Encoded `state` fields, per (shared, memoized) SessionState object. */
const encoded = new WeakMap<SessionState, Uint8Array>();

/**
 * The GetState response. The store memoizes folded states of unchanged
 * sessions (store/state-memo.ts), and for binary codecs this keeps their
 * encoding too: the response carries the already-encoded `state` field as a
 * raw field (protobuf-es writes a message's `$unknown` fields verbatim, and
 * field 1 with these bytes is byte-for-byte what encoding `state` would
 * give), so a warm GetState of a 1,000-message path costs a copy instead of
 * re-encoding ~1 MB. Encoding was over half the server time of a warm
 * GetState (bench row 4). JSON codecs get the plain message.
 */
export function stateResponse(state: SessionState, contentType: string | null): GetStateResponse {
  if (contentType === null || contentType.includes("json")) {
    return create(GetStateResponseSchema, { state });
  }
  let field = encoded.get(state);
  if (field === undefined) {
    field = new BinaryWriter().bytes(toBinary(SessionStateSchema, state)).finish();
    encoded.set(state, field);
  }
  const response = create(GetStateResponseSchema);
  response.$unknown = [{ no: 1, wireType: WireType.LengthDelimited, data: field }];
  return response;
}
