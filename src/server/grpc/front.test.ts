import { create, fromBinary } from "@bufbuild/protobuf";
import { parseTimeout } from "@connectrpc/connect/protocol-grpc";
import { describe, expect, it } from "vitest";
import {
  GetSessionRequestSchema,
  StoreService,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { grpcServiceDefinition, Undecodable } from "./definition.js";
import { isNativeGrpc } from "./front.js";
import { timeoutError } from "./wire-status.js";

describe("isNativeGrpc: what grpc-js serves", () => {
  it.each([
    "application/grpc",
    "application/grpc+proto",
    "APPLICATION/GRPC+PROTO",
    "application/grpc; charset=utf-8",
  ])("%s goes to grpc-js", (ct) => expect(isNativeGrpc(ct)).toBe(true));

  it.each([
    undefined,
    "application/grpc-web",
    "application/grpc-web+proto",
    "application/grpc-web-text",
    // grpc-js would decode JSON bodies as protobuf: gRPC with the JSON codec stays on connect-node.
    "application/grpc+json",
    "application/connect+proto",
    "application/proto",
    "application/grpcx",
  ])("%s stays on connect-node", (ct) => expect(isNativeGrpc(ct)).toBe(false));
});

describe("timeoutError: connect-node's answer to a grpc-timeout header", () => {
  const max = 60_000;
  it.each([
    "1S",
    "60S",
    "1M",
    "61S",
    "2H",
    "100m",
    "5u",
    "7n",
    "99999999m",
    "1s",
    "S",
    "123456789m",
    " 1S",
  ])("%s: the same verdict and message as connect's parseTimeout", (value) => {
    const ours = timeoutError(value, max);
    const theirs = parseTimeout(value, max).error;
    expect(ours?.code).toBe(theirs?.code);
    expect(ours?.rawMessage).toBe(theirs?.rawMessage);
  });

  it("no header, or any valid deadline when there is no maximum (0)", () => {
    expect(timeoutError(undefined, max)).toBeUndefined();
    expect(timeoutError("99999999H", 0)).toBeUndefined();
    expect(timeoutError("soon", 0)?.rawMessage).toBe(
      "protocol error: invalid grpc timeout value: soon",
    );
  });
});

describe("grpcServiceDefinition: from the protobuf-es descriptors", () => {
  const def = grpcServiceDefinition(StoreService);

  it("has every method under its gRPC path, with its streaming shape", () => {
    expect(Object.keys(def).sort()).toEqual(StoreService.methods.map((m) => m.localName).sort());
    expect(def.getSession?.path).toBe("/sessiond.v1.StoreService/GetSession");
    expect([def.getSession?.requestStream, def.getSession?.responseStream]).toEqual([false, false]);
    expect(def.watchSessions?.path).toBe("/sessiond.v1.StoreService/WatchSessions");
    expect(def.watchSessions?.responseStream).toBe(true);
  });

  it("serializes with toBinary and parses with fromBinary", () => {
    const m = def.getSession;
    if (m === undefined) throw new Error("no getSession");
    const req = create(GetSessionRequestSchema, { workspace: "w", session: "s-1" });
    const bytes = m.requestSerialize(req);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(fromBinary(GetSessionRequestSchema, bytes)).toEqual(req);
    expect(m.requestDeserialize(bytes)).toEqual(req);
  });

  it("hands an unparseable request to the handler as Undecodable (grpc-js would say INTERNAL)", () => {
    const bad = def.getSession?.requestDeserialize(Buffer.from([0x08, 0x05]));
    expect(bad).toBeInstanceOf(Undecodable);
    expect((bad as Undecodable).reason).not.toBe("");
  });
});
