import { type DescField, type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type SessionMeta, SessionMetaSchema } from "../../../gen/sessiond/v1/session_pb.js";
import {
  type AppendResponse,
  AppendResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { encodeAppendResponse } from "./append-response-binary.js";

/** Responses with a hand-written encoder (undefined from one: a message it does not cover, encoded as usual). */
const OWN_ENCODERS = new Map<DescMessage, (message: Message) => Uint8Array | undefined>([
  [AppendResponseSchema, (m) => encodeAppendResponse(m as AppendResponse)],
]);

/**
 * The binary encoding of a response: by its own encoder when it has one
 * (OWN_ENCODERS), else with each SessionMeta of its top-level
 * lists (a ListSessions page) encoded once per object: the store makes one
 * SessionMeta per record object and engines hand out the same record while
 * a session is unchanged (store/meta.ts, storage/session-record.ts,
 * postgres/row-records.ts), so a page asked for again costs a copy of the
 * bytes instead of a reflective encoding of every field of 100 messages,
 * which was most of a warm page's server time. Nothing changes a
 * SessionMeta once made, so the object is the key.
 *
 * The lists are written first, then the rest of the message: a valid
 * encoding in any order, and the canonical one when the lists have the
 * lowest field numbers (ListSessionsResponse: sessions = 1).
 */
export function encodeResponse(schema: DescMessage, message: Message): Uint8Array {
  const own = OWN_ENCODERS.get(schema)?.(message);
  if (own !== undefined) return own;
  const lists = metaListsOf(schema);
  if (lists.length === 0) return toBinary(schema, message);
  const w = new BinaryWriter();
  const rest: Record<string, unknown> = { ...message };
  for (const f of lists) {
    for (const meta of rest[f.localName] as SessionMeta[]) {
      w.tag(f.number, WireType.LengthDelimited).bytes(metaBytes(meta));
    }
    rest[f.localName] = [];
  }
  w.raw(toBinary(schema, rest as Message));
  return w.finish();
}

const encoded = new WeakMap<SessionMeta, Uint8Array>();

function metaBytes(meta: SessionMeta): Uint8Array {
  let bytes = encoded.get(meta);
  if (bytes === undefined) {
    bytes = toBinary(SessionMetaSchema, meta);
    encoded.set(meta, bytes);
  }
  return bytes;
}

const listsBySchema = new WeakMap<DescMessage, DescField[]>();

/** The top-level repeated SessionMeta fields of a message type, in field-number order. */
function metaListsOf(schema: DescMessage): DescField[] {
  let lists = listsBySchema.get(schema);
  if (lists === undefined) {
    lists = schema.fields
      .filter(
        (f) =>
          f.fieldKind === "list" && f.listKind === "message" && f.message === SessionMetaSchema,
      )
      .sort((a, b) => a.number - b.number);
    listsBySchema.set(schema, lists);
  }
  return lists;
}
