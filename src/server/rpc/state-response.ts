import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  type SessionState,
  SessionStateSchema,
  type StateMessage,
  StateMessageSchema,
} from "../../../gen/sessiond/v1/session_pb.js";
import {
  type GetStateResponse,
  GetStateResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";

/**
 * The store memoizes folded states of unchanged sessions (store/state-memo.ts)
 * and shares their message objects between the pages of a paged read, so
 * for binary codecs their encodings are kept too: each message once, as the
 * `messages` field it becomes (tag, length, bytes), and the whole `state`
 * field of a state answered in one page. The response carries the `state`
 * field already encoded, as a raw field (protobuf-es writes a message's
 * `$unknown` fields verbatim, and field 1 with these bytes is what encoding
 * `state` would give), so a warm GetState costs a copy instead of
 * re-encoding, and sizing a page costs nothing extra: the sizes are the
 * lengths of the encodings it is then built from. JSON codecs get the plain
 * message, sized by encoding each message to JSON once.
 */
const framed = new WeakMap<StateMessage, Uint8Array>();
const jsonSizes = new WeakMap<StateMessage, number>();
const encodedStates = new WeakMap<SessionState, Uint8Array>();

function framedMessage(m: StateMessage): Uint8Array {
  let bytes = framed.get(m);
  if (bytes === undefined) {
    bytes = new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .bytes(toBinary(StateMessageSchema, m))
      .finish();
    framed.set(m, bytes);
  }
  return bytes;
}

function jsonMessageSize(m: StateMessage): number {
  let size = jsonSizes.get(m);
  if (size === undefined) {
    // +1: the comma between array elements.
    size = Buffer.byteLength(toJsonString(StateMessageSchema, m)) + 1;
    jsonSizes.set(m, size);
  }
  return size;
}

/** The state's fields other than its messages, encoded. */
function restOf(state: SessionState): SessionState {
  return { ...state, messages: [] };
}

/** How the store sizes a page of a state for this codec (see StatePageRequest). */
export function stateSizes(json: boolean): {
  sizeOf: (m: StateMessage) => number;
  sizeOfRest: (state: SessionState) => number;
  knownSize: (state: SessionState) => number | undefined;
} {
  return json
    ? {
        sizeOf: jsonMessageSize,
        sizeOfRest: (s) => Buffer.byteLength(toJsonString(SessionStateSchema, restOf(s))),
        knownSize: () => undefined,
      }
    : {
        sizeOf: (m) => framedMessage(m).length,
        sizeOfRest: (s) => toBinary(SessionStateSchema, restOf(s)).length,
        // A warm GetState answered whole before needs no sizing again.
        knownSize: (s) => encodedStates.get(s)?.length,
      };
}

/** The `state` field's value (length prefix, then the messages and the other fields). */
function encodeState(state: SessionState): Uint8Array {
  const parts = state.messages.map(framedMessage);
  parts.push(toBinary(SessionStateSchema, restOf(state)));
  let length = 0;
  for (const p of parts) length += p.length;
  const prefix = new BinaryWriter().uint32(length).finish();
  const out = new Uint8Array(prefix.length + length);
  out.set(prefix, 0);
  let at = prefix.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The GetState response carrying `state` (a whole state or one page of it). */
export function stateResponse(
  state: SessionState,
  nextPageToken: string,
  json: boolean,
): GetStateResponse {
  if (json) return create(GetStateResponseSchema, { state, nextPageToken });
  let field = encodedStates.get(state);
  if (field === undefined) {
    field = encodeState(state);
    encodedStates.set(state, field);
  }
  const response = create(GetStateResponseSchema, { nextPageToken });
  response.$unknown = [{ no: 1, wireType: WireType.LengthDelimited, data: field }];
  return response;
}
