import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { GetStateResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { foldPath } from "../core/fold.js";
import { assistant, buildLog, compaction, label, user } from "../core/test-helpers.js";
import { stateResponse } from "./state-response.js";

describe("stateResponse", () => {
  const log = buildLog(
    user("u1", "first"),
    assistant("a1", "answer"),
    label("l1", "mark"),
    compaction("c1", "summary", ["u1"]),
    user("u2", "ünïcode ✓"),
  );
  const state = foldPath(log.path(), View.CONTEXT);

  it("for binary codecs is byte-for-byte the encoding of the plain response", () => {
    const plain = toBinary(GetStateResponseSchema, create(GetStateResponseSchema, { state }));
    for (const ct of ["application/grpc", "application/grpc+proto", "application/proto"]) {
      const raw = toBinary(GetStateResponseSchema, stateResponse(state, ct));
      expect(Buffer.from(raw).equals(Buffer.from(plain))).toBe(true);
      expect(fromBinary(GetStateResponseSchema, raw).state).toEqual(state);
    }
  });

  it("for JSON codecs carries the state as a plain field", () => {
    for (const ct of ["application/json", "application/grpc+json", null]) {
      const res = stateResponse(state, ct);
      expect(res.state).toBe(state);
      expect(res.$unknown).toBeUndefined();
    }
  });
});
