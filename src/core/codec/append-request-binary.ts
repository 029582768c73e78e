import { fromBinary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import type {
  BlobRef,
  BranchSummary,
  Compaction,
  ContentPart,
  Custom,
  Entry,
  ForkedFrom,
  ImagePart,
  Label,
  Leaf,
  Message,
  ModelChange,
  SessionInfo,
  ThinkingLevelChange,
  ThinkingPart,
  ToolCall,
  Usage,
} from "../../../gen/sessiond/v1/entry_pb.js";
import {
  type AppendRequest,
  AppendRequestSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";

/**
 * Decodes an AppendRequest from protobuf binary: the same result as
 * `fromBinary(AppendRequestSchema, bytes)`, without its reflection (a
 * descriptor lookup, a checked `set` and a Map per field; the largest part
 * of a native gRPC Append's allocation before this file).
 *
 * The fast path builds the object literals protobuf-es v2 messages are
 * (`$typeName`, every implicit-presence field with its default, optional
 * and message fields only when present, Struct fields as plain JSON
 * objects, `google.protobuf.Value` as a Value message, bytes as views of
 * the input) for input as clients encode it: each singular field at most
 * once, known fields only, the wire type the schema gives, strings of
 * well-formed UTF-8 (decoded with the same strict TextDecoder protobuf-es
 * uses when a string has a non-ASCII byte), integers in their shortest
 * range. Anything else (an unknown field, a field twice, a second member
 * of a oneof, an over-long varint, a map entry without key or value, a
 * `__proto__` key, data nested deeper than MAX_DEPTH, a bad length, ...)
 * abandons it and decodes the whole request with `fromBinary` instead,
 * which gives today's result or throws today's error.
 * append-request-binary.test.ts checks it against fromBinary on random
 * requests of every entry kind.
 */
export function decodeAppendRequest(bytes: Uint8Array): AppendRequest {
  return tryDecodeAppendRequest(bytes) ?? fromBinary(AppendRequestSchema, bytes);
}

/**
 * The fast path alone: the request, or undefined when `bytes` is not a
 * shape it handles (then only `fromBinary` may decide, error included).
 * Exported for the tests.
 */
export function tryDecodeAppendRequest(bytes: Uint8Array): AppendRequest | undefined {
  try {
    return new Reader(bytes).appendRequest();
  } catch {
    // Not a shape we handle, or malformed: left to the reflective decoder.
  }
  return undefined;
}

// Stryker disable next-line ObjectLiteral,BooleanLiteral: the sentinel is only thrown and caught, never read
const UNHANDLED = Object.freeze({ unhandled: true });
function bail(): never {
  throw UNHANDLED;
}

/** Deepest nesting of messages and Struct / Value data taken on the fast path. */
const MAX_DEPTH = 32;

// Wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;

/** protobuf-es's strict decoder (utf8Validation), for strings with a non-ASCII byte. */
let strictUtf8: InstanceType<typeof TextDecoder> | undefined;

const EMPTY_BYTES = new Uint8Array(0);

class Reader {
  private pos = 0;
  /** The input as a Buffer, for its string decoding (the same memory). */
  private readonly text: Buffer;
  private depth = 0;
  private view: DataView | undefined;

  constructor(private readonly buf: Uint8Array) {
    this.text = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  }

  appendRequest(): AppendRequest {
    const end = this.buf.length;
    const req: AppendRequest = {
      $typeName: "sessiond.v1.AppendRequest",
      workspace: "",
      session: "",
      entries: [],
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | LEN:
          seen = once(seen, 1);
          req.workspace = this.string(end);
          break;
        case (2 << 3) | LEN:
          seen = once(seen, 2);
          req.session = this.string(end);
          break;
        case (3 << 3) | LEN:
          req.entries.push(this.nested(end, this.entry));
          break;
        case (4 << 3) | LEN:
          seen = once(seen, 4);
          req.expectedLeafId = this.string(end);
          break;
        case (5 << 3) | VARINT:
          seen = once(seen, 5);
          req.expectedSeq = this.uint64();
          break;
        default:
          bail();
      }
    }
    return req;
  }

  // -------------------------------------------------------------------------
  // Messages. Each reads fields up to `end`; `nested` reads a length and
  // calls one of these with the end of that length.

  private entry(end: number): Entry {
    const e: Entry = {
      $typeName: "sessiond.v1.Entry",
      id: "",
      seq: 0n,
      kind: { case: undefined },
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | LEN:
          seen = once(seen, 1);
          e.id = this.string(end);
          break;
        case (2 << 3) | LEN:
          seen = once(seen, 2);
          e.parentId = this.string(end);
          break;
        case (3 << 3) | LEN:
          seen = once(seen, 3);
          e.timestamp = this.nested(end, this.timestamp);
          break;
        case (4 << 3) | VARINT:
          seen = once(seen, 4);
          e.seq = this.uint64();
          break;
        case (10 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "sessionInfo", value: this.nested(end, this.sessionInfo) };
          break;
        case (11 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "message", value: this.nested(end, this.message) };
          break;
        case (12 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "modelChange", value: this.nested(end, this.modelChange) };
          break;
        case (13 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = {
            case: "thinkingLevelChange",
            value: this.nested(end, this.thinkingLevelChange),
          };
          break;
        case (14 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "compaction", value: this.nested(end, this.compaction) };
          break;
        case (15 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "branchSummary", value: this.nested(end, this.branchSummary) };
          break;
        case (16 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "label", value: this.nested(end, this.label) };
          break;
        case (17 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "leaf", value: this.nested(end, this.leaf) };
          break;
        case (18 << 3) | LEN:
          seen = once(seen, 10);
          e.kind = { case: "custom", value: this.nested(end, this.custom) };
          break;
        default:
          bail();
      }
    }
    return e;
  }

  private timestamp(end: number): Timestamp {
    const t: Timestamp = { $typeName: "google.protobuf.Timestamp", seconds: 0n, nanos: 0 };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | VARINT)) {
        seen = once(seen, 1);
        // int64: a negative one takes ten bytes, more than the fast path reads.
        t.seconds = BigInt(this.varint53());
      } else if (tag === ((2 << 3) | VARINT)) {
        seen = once(seen, 2);
        t.nanos = this.int32();
      } else bail();
    }
    return t;
  }

  private sessionInfo(end: number): SessionInfo {
    const s: SessionInfo = {
      $typeName: "sessiond.v1.SessionInfo",
      sessionId: "",
      formatVersion: 0,
      spawnDepth: 0,
      tags: {},
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | LEN:
          seen = once(seen, 1);
          s.sessionId = this.string(end);
          break;
        case (2 << 3) | LEN:
          seen = once(seen, 2);
          s.title = this.string(end);
          break;
        case (3 << 3) | LEN:
          seen = once(seen, 3);
          s.cwd = this.string(end);
          break;
        case (4 << 3) | LEN:
          seen = once(seen, 4);
          s.createdAt = this.nested(end, this.timestamp);
          break;
        case (5 << 3) | VARINT:
          seen = once(seen, 5);
          s.formatVersion = this.uint32();
          break;
        case (6 << 3) | LEN:
          seen = once(seen, 6);
          s.parentSessionId = this.string(end);
          break;
        case (7 << 3) | LEN:
          seen = once(seen, 7);
          s.agentType = this.string(end);
          break;
        case (8 << 3) | VARINT:
          seen = once(seen, 8);
          s.spawnDepth = this.uint32();
          break;
        case (9 << 3) | LEN:
          seen = once(seen, 9);
          s.forkedFrom = this.nested(end, this.forkedFrom);
          break;
        case (10 << 3) | LEN:
          seen = once(seen, 10);
          s.metadata = this.nested(end, this.structJson);
          break;
        case (11 << 3) | LEN:
          this.mapEntry(end, s.tags);
          break;
        default:
          bail();
      }
    }
    return s;
  }

  private forkedFrom(end: number): ForkedFrom {
    const f: ForkedFrom = { $typeName: "sessiond.v1.ForkedFrom", sessionId: "", entryId: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        f.sessionId = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        f.entryId = this.string(end);
      } else bail();
    }
    return f;
  }

  private message(end: number): Message {
    const m: Message = {
      $typeName: "sessiond.v1.Message",
      role: 0,
      content: [],
      isError: false,
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | VARINT:
          seen = once(seen, 1);
          m.role = this.int32();
          break;
        case (2 << 3) | LEN:
          m.content.push(this.nested(end, this.contentPart));
          break;
        case (3 << 3) | LEN:
          seen = once(seen, 3);
          m.toolCallId = this.string(end);
          break;
        case (4 << 3) | LEN:
          seen = once(seen, 4);
          m.toolName = this.string(end);
          break;
        case (5 << 3) | VARINT:
          seen = once(seen, 5);
          m.isError = this.bool();
          break;
        case (6 << 3) | LEN:
          seen = once(seen, 6);
          m.model = this.string(end);
          break;
        case (7 << 3) | LEN:
          seen = once(seen, 7);
          m.provider = this.string(end);
          break;
        case (8 << 3) | LEN:
          seen = once(seen, 8);
          m.usage = this.nested(end, this.usage);
          break;
        case (9 << 3) | LEN:
          seen = once(seen, 9);
          m.stopReason = this.string(end);
          break;
        case (10 << 3) | LEN:
          seen = once(seen, 10);
          m.metadata = this.nested(end, this.structJson);
          break;
        default:
          bail();
      }
    }
    return m;
  }

  private contentPart(end: number): ContentPart {
    const p: ContentPart = { $typeName: "sessiond.v1.ContentPart", part: { case: undefined } };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      seen = once(seen, 1);
      switch (tag) {
        case (1 << 3) | LEN:
          p.part = { case: "text", value: this.string(end) };
          break;
        case (2 << 3) | LEN:
          p.part = { case: "thinking", value: this.nested(end, this.thinkingPart) };
          break;
        case (3 << 3) | LEN:
          p.part = { case: "image", value: this.nested(end, this.imagePart) };
          break;
        case (4 << 3) | LEN:
          p.part = { case: "toolCall", value: this.nested(end, this.toolCall) };
          break;
        case (5 << 3) | LEN:
          p.part = { case: "blob", value: this.nested(end, this.blobRef) };
          break;
        default:
          bail();
      }
    }
    return p;
  }

  private thinkingPart(end: number): ThinkingPart {
    const t: ThinkingPart = { $typeName: "sessiond.v1.ThinkingPart", thinking: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        t.thinking = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        t.signature = this.string(end);
      } else bail();
    }
    return t;
  }

  private imagePart(end: number): ImagePart {
    const i: ImagePart = { $typeName: "sessiond.v1.ImagePart", mimeType: "", data: EMPTY_BYTES };
    let seen = 0;
    let data = false;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        i.mimeType = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        i.data = this.bytes(end);
        data = true;
      } else bail();
    }
    // protobuf-es gives each message a zero-length array of its own.
    if (!data) i.data = new Uint8Array(0);
    return i;
  }

  private toolCall(end: number): ToolCall {
    const t: ToolCall = { $typeName: "sessiond.v1.ToolCall", id: "", name: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | LEN:
          seen = once(seen, 1);
          t.id = this.string(end);
          break;
        case (2 << 3) | LEN:
          seen = once(seen, 2);
          t.name = this.string(end);
          break;
        case (3 << 3) | LEN:
          seen = once(seen, 3);
          t.arguments = this.nested(end, this.value);
          break;
        default:
          bail();
      }
    }
    return t;
  }

  private blobRef(end: number): BlobRef {
    const b: BlobRef = {
      $typeName: "sessiond.v1.BlobRef",
      sha256: "",
      size: 0n,
      part: 0,
      mediaType: "",
      preview: "",
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | LEN:
          seen = once(seen, 1);
          b.sha256 = this.string(end);
          break;
        case (2 << 3) | VARINT:
          seen = once(seen, 2);
          b.size = this.uint64();
          break;
        case (3 << 3) | VARINT:
          seen = once(seen, 3);
          b.part = this.int32();
          break;
        case (4 << 3) | LEN:
          seen = once(seen, 4);
          b.mediaType = this.string(end);
          break;
        case (5 << 3) | LEN:
          seen = once(seen, 5);
          b.preview = this.string(end);
          break;
        case (6 << 3) | LEN:
          seen = once(seen, 6);
          b.signature = this.string(end);
          break;
        default:
          bail();
      }
    }
    return b;
  }

  private usage(end: number): Usage {
    const u: Usage = {
      $typeName: "sessiond.v1.Usage",
      inputTokens: 0n,
      outputTokens: 0n,
      cacheReadTokens: 0n,
      cacheWriteTokens: 0n,
      reasoningTokens: 0n,
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      switch (tag) {
        case (1 << 3) | VARINT:
          seen = once(seen, 1);
          u.inputTokens = this.uint64();
          break;
        case (2 << 3) | VARINT:
          seen = once(seen, 2);
          u.outputTokens = this.uint64();
          break;
        case (3 << 3) | VARINT:
          seen = once(seen, 3);
          u.cacheReadTokens = this.uint64();
          break;
        case (4 << 3) | VARINT:
          seen = once(seen, 4);
          u.cacheWriteTokens = this.uint64();
          break;
        case (5 << 3) | VARINT:
          seen = once(seen, 5);
          u.reasoningTokens = this.uint64();
          break;
        default:
          bail(); // cost (field 6) is rare: the generic decoder reads it
      }
    }
    return u;
  }

  private modelChange(end: number): ModelChange {
    const m: ModelChange = { $typeName: "sessiond.v1.ModelChange", model: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        m.model = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        m.provider = this.string(end);
      } else bail();
    }
    return m;
  }

  private thinkingLevelChange(end: number): ThinkingLevelChange {
    const t: ThinkingLevelChange = {
      $typeName: "sessiond.v1.ThinkingLevelChange",
      thinkingLevel: "",
    };
    let seen = 0;
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      seen = once(seen, 1);
      t.thinkingLevel = this.string(end);
    }
    return t;
  }

  private compaction(end: number): Compaction {
    const c: Compaction = {
      $typeName: "sessiond.v1.Compaction",
      summary: "",
      replacesEntryIds: [],
    };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        c.summary = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        c.replacesEntryIds.push(this.string(end));
      } else if (tag === ((3 << 3) | VARINT)) {
        seen = once(seen, 3);
        c.tokensBefore = this.uint64();
      } else bail();
    }
    return c;
  }

  private branchSummary(end: number): BranchSummary {
    const b: BranchSummary = { $typeName: "sessiond.v1.BranchSummary", summary: "", fromId: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        b.summary = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        b.fromId = this.string(end);
      } else bail();
    }
    return b;
  }

  private label(end: number): Label {
    const l: Label = { $typeName: "sessiond.v1.Label", label: "" };
    let seen = 0;
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      seen = once(seen, 1);
      l.label = this.string(end);
    }
    return l;
  }

  private leaf(end: number): Leaf {
    const l: Leaf = { $typeName: "sessiond.v1.Leaf", leafId: "" };
    let seen = 0;
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      seen = once(seen, 1);
      l.leafId = this.string(end);
    }
    return l;
  }

  private custom(end: number): Custom {
    const c: Custom = { $typeName: "sessiond.v1.Custom", namespace: "" };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      if (tag === ((1 << 3) | LEN)) {
        seen = once(seen, 1);
        c.namespace = this.string(end);
      } else if (tag === ((2 << 3) | LEN)) {
        seen = once(seen, 2);
        c.data = this.nested(end, this.structJson);
      } else bail();
    }
    return c;
  }

  // -------------------------------------------------------------------------
  // google.protobuf.Struct / Value / ListValue. A Struct field of our
  // messages is a plain JSON object (protobuf-es's wktStructToLocal of the
  // Struct it read); a Value stays a Value message, with Struct and
  // ListValue messages inside.

  /** A Struct as a field of our messages: its JSON object. */
  private structJson(end: number): JsonObject {
    const json: JsonObject = {};
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      const entryEnd = this.lenEnd(end);
      const key = this.mapKey(entryEnd);
      if (this.varint32() !== ((2 << 3) | LEN)) bail();
      json[key] = valueToJson(this.nested(entryEnd, this.value));
      if (this.pos !== entryEnd) bail();
    }
    return json;
  }

  private struct(end: number): Struct {
    const s: Struct = { $typeName: "google.protobuf.Struct", fields: {} };
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      const entryEnd = this.lenEnd(end);
      const key = this.mapKey(entryEnd);
      if (this.varint32() !== ((2 << 3) | LEN)) bail();
      s.fields[key] = this.nested(entryEnd, this.value);
      if (this.pos !== entryEnd) bail();
    }
    return s;
  }

  private listValue(end: number): ListValue {
    const l: ListValue = { $typeName: "google.protobuf.ListValue", values: [] };
    while (this.pos < end) {
      if (this.varint32() !== ((1 << 3) | LEN)) bail();
      l.values.push(this.nested(end, this.value));
    }
    return l;
  }

  private value(end: number): Value {
    const v: Value = { $typeName: "google.protobuf.Value", kind: { case: undefined } };
    let seen = 0;
    while (this.pos < end) {
      const tag = this.varint32();
      seen = once(seen, 1);
      switch (tag) {
        case (1 << 3) | VARINT:
          v.kind = { case: "nullValue", value: this.int32() };
          break;
        case (2 << 3) | I64:
          v.kind = { case: "numberValue", value: this.double(end) };
          break;
        case (3 << 3) | LEN:
          v.kind = { case: "stringValue", value: this.string(end) };
          break;
        case (4 << 3) | VARINT:
          v.kind = { case: "boolValue", value: this.bool() };
          break;
        case (5 << 3) | LEN:
          v.kind = { case: "structValue", value: this.nested(end, this.struct) };
          break;
        case (6 << 3) | LEN:
          v.kind = { case: "listValue", value: this.nested(end, this.listValue) };
          break;
        default:
          bail();
      }
    }
    return v;
  }

  /** A map<string, string> entry (key 1, value 2, both present, in that order) into `map`. */
  private mapEntry(end: number, map: Record<string, string>): void {
    const entryEnd = this.lenEnd(end);
    const key = this.mapKey(entryEnd);
    if (this.varint32() !== ((2 << 3) | LEN)) bail();
    map[key] = this.string(entryEnd);
    if (this.pos !== entryEnd) bail();
  }

  /** The key field of a map entry (first, present); never `__proto__`, which an object would not keep. */
  private mapKey(end: number): string {
    if (this.varint32() !== ((1 << 3) | LEN)) bail();
    const key = this.string(end);
    if (key === "__proto__") bail();
    return key;
  }

  // -------------------------------------------------------------------------
  // Scalars.

  /** Reads a length, then the message in it with `read`; the length must be used up exactly. */
  private nested<T>(end: number, read: (this: Reader, end: number) => T): T {
    const inner = this.lenEnd(end);
    if (++this.depth > MAX_DEPTH) bail();
    const value = read.call(this, inner);
    this.depth--;
    if (this.pos !== inner) bail();
    return value;
  }

  /** Reads a length and returns where it ends (within `end`). */
  private lenEnd(end: number): number {
    const len = this.varint32();
    const inner = this.pos + len;
    if (inner > end) bail();
    return inner;
  }

  private string(end: number): string {
    const stop = this.lenEnd(end);
    const start = this.pos;
    this.pos = stop;
    const buf = this.buf;
    // Stryker disable next-line EqualityOperator: reading one byte past the string only picks the strict decoder, which gives an ASCII string the same text as latin1
    for (let i = start; i < stop; i++) {
      // Stryker disable next-line ConditionalExpression: the strict decoder for every string gives an ASCII string the same text as latin1 (only slower)
      if ((buf[i] as number) >= 0x80) {
        strictUtf8 ??= new TextDecoder("utf-8", { fatal: true });
        return strictUtf8.decode(buf.subarray(start, stop));
      }
    }
    return this.text.toString("latin1", start, stop);
  }

  private bytes(end: number): Uint8Array {
    const stop = this.lenEnd(end);
    const start = this.pos;
    this.pos = stop;
    return this.buf.subarray(start, stop);
  }

  private double(end: number): number {
    // Stryker disable next-line ConditionalExpression,ArithmeticOperator: a double that spills past its Value is declined anyway by nested()'s used-up-exactly check (value() is only read through nested), and past the input getFloat64 throws, which is declined too
    if (this.pos + 8 > end) bail();
    this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    const d = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return d;
  }

  /** A varint of at most 5 bytes below 2^32 (tags, lengths, uint32). */
  private varint32(): number {
    const buf = this.buf;
    let b = buf[this.pos++] as number;
    if (b < 0x80) return b;
    let value = b & 0x7f;
    for (let shift = 7; shift < 35; shift += 7) {
      b = buf[this.pos++] as number;
      // Stryker disable next-line ConditionalExpression: past the input b is undefined, (undefined & 0x7f) adds 0 and undefined < 0x80 is false, so the loop runs out and bails at its end
      if (b === undefined) bail();
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (value >= 2 ** 32) bail();
        return value;
      }
    }
    return bail();
  }

  /** A varint of at most 7 bytes (below 2^49: exact as a number). */
  private varint53(): number {
    const buf = this.buf;
    let value = 0;
    for (let shift = 0; shift < 49; shift += 7) {
      const b = buf[this.pos++] as number;
      // Stryker disable next-line ConditionalExpression: past the input b is undefined, (undefined & 0x7f) adds 0 and undefined < 0x80 is false, so the loop runs out and bails at its end
      if (b === undefined) bail();
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    return bail();
  }

  private uint32(): number {
    return this.varint32();
  }

  /** int32 and enums: non-negative ones only (a negative takes ten bytes). */
  private int32(): number {
    const v = this.varint32();
    if (v >= 2 ** 31) bail();
    return v;
  }

  private uint64(): bigint {
    return BigInt(this.varint53());
  }

  private bool(): boolean {
    const v = this.varint32();
    if (v > 1) bail();
    return v === 1;
  }
}

/** Marks singular field `no` (1-31) as read; a second time is not the fast path's. */
function once(seen: number, no: number): number {
  const bit = 1 << no;
  if ((seen & bit) !== 0) bail();
  return seen | bit;
}

/** A Value as JSON (protobuf-es's wktValueToLocal). */
function valueToJson(v: Value): JsonValue {
  const k = v.kind;
  switch (k.case) {
    case "structValue": {
      const json: JsonObject = {};
      for (const [key, value] of Object.entries(k.value.fields)) json[key] = valueToJson(value);
      return json;
    }
    case "listValue":
      return k.value.values.map(valueToJson);
    case "nullValue":
    case undefined:
      return null;
    default:
      return k.value;
  }
}
