import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { SessionMetaSchema } from "../../../gen/sessiond/v1/session_pb.js";
import { GetEntriesResponseSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import { ListSessionsResponseSchema } from "../../../gen/sessiond/v1/store_service_pb.js";
import { encodeResponse } from "./response-binary.js";

function meta(i: number) {
  return create(SessionMetaSchema, {
    id: `s-${i}`,
    workspace: "w",
    title: `title ${i} é`,
    cwd: "/home/dev",
    createdAt: timestampFromMs(1_700_000_000_000 + i),
    entryCount: BigInt(i + 1),
    headSeq: BigInt(i + 1),
    leafId: `leaf-${i}`,
    tags: { k: `v${i}` },
  });
}

describe("encodeResponse", () => {
  it("encodes a page exactly as protobuf does, also when asked again for the same metas", () => {
    const sessions = Array.from({ length: 5 }, (_, i) => meta(i));
    const page = create(ListSessionsResponseSchema, { sessions, nextPageToken: "next" });
    const expected = Buffer.from(toBinary(ListSessionsResponseSchema, page));
    expect(Buffer.from(encodeResponse(ListSessionsResponseSchema, page))).toEqual(expected);
    // The same metas in another response: their bytes reused, the response's own fields not.
    const again = create(ListSessionsResponseSchema, { sessions, nextPageToken: "" });
    const decoded = fromBinary(
      ListSessionsResponseSchema,
      encodeResponse(ListSessionsResponseSchema, again),
    );
    expect(decoded.nextPageToken).toBe("");
    expect(decoded.sessions.map((s) => s.title)).toEqual(sessions.map((s) => s.title));
    expect(Buffer.from(encodeResponse(ListSessionsResponseSchema, again))).toEqual(
      Buffer.from(toBinary(ListSessionsResponseSchema, again)),
    );
  });

  it("a SessionMeta is encoded once per object: a second page with the same object reuses its bytes", () => {
    const m = meta(7);
    const first = create(ListSessionsResponseSchema, { sessions: [m] });
    encodeResponse(ListSessionsResponseSchema, first);
    // Nothing changes a SessionMeta once made (the store makes a new one); changed here,
    // only to see that the bytes come from the first encoding of this object.
    const title = m.title;
    m.title = "changed after encoding";
    const second = fromBinary(
      ListSessionsResponseSchema,
      encodeResponse(
        ListSessionsResponseSchema,
        create(ListSessionsResponseSchema, { sessions: [m] }),
      ),
    );
    expect(second.sessions[0]?.title).toBe(title);
  });

  it("an empty page and a response without metas encode as protobuf does", () => {
    const empty = create(ListSessionsResponseSchema, {});
    expect(encodeResponse(ListSessionsResponseSchema, empty).length).toBe(0);
    const other = create(GetEntriesResponseSchema, { headSeq: 3n });
    expect(Buffer.from(encodeResponse(GetEntriesResponseSchema, other))).toEqual(
      Buffer.from(toBinary(GetEntriesResponseSchema, other)),
    );
  });
});
