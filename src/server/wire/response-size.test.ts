import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { GetEntriesResponseSchema } from "../../../gen/sessiond/v1/session_service_pb.js";
import { preEncoded, responseLimit } from "./response-size.js";

function page(entries: number, textBytes: number) {
  return create(GetEntriesResponseSchema, {
    headSeq: BigInt(entries),
    entries: Array.from({ length: entries }, (_, i) =>
      create(EntrySchema, {
        id: `e${i}`,
        seq: BigInt(i + 1),
        kind: {
          case: "message",
          value: {
            role: Role.USER,
            content: [{ part: { case: "text", value: "é".repeat(textBytes / 2) } }],
          },
        },
      }),
    ),
  });
}

function refusal(f: () => unknown): ConnectError {
  try {
    f();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("the response was not refused");
}

describe("responseLimit", () => {
  it("hands a binary codec the same bytes the response encodes to", () => {
    const message = page(20, 1000);
    const limited = responseLimit(GetEntriesResponseSchema, "application/grpc", 1 << 20)(message);
    expect(Buffer.from(toBinary(GetEntriesResponseSchema, limited))).toEqual(
      Buffer.from(toBinary(GetEntriesResponseSchema, message)),
    );
  });

  it("hands a serialiser that takes pre-encoded bytes exactly the response's encoding", () => {
    const message = page(20, 1000);
    const limited = responseLimit(
      GetEntriesResponseSchema,
      "application/grpc",
      1 << 20,
      true,
    )(message);
    const bytes = preEncoded(limited);
    expect(bytes).toBeDefined();
    expect(Buffer.from(bytes as Uint8Array)).toEqual(
      Buffer.from(toBinary(GetEntriesResponseSchema, message)),
    );
    // Nothing else: only a serialiser that asks for the bytes sends them.
    expect(toBinary(GetEntriesResponseSchema, limited).length).toBe(0);
    expect(preEncoded(message)).toBeUndefined();
    expect(preEncoded(undefined)).toBeUndefined();
  });

  it("refuses an oversize response on the pre-encoded path too", () => {
    const err = refusal(() =>
      responseLimit(GetEntriesResponseSchema, "application/grpc", 10_000, true)(page(20, 1000)),
    );
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toContain("--max-message-bytes");
  });

  it("hands a JSON codec the message itself", () => {
    const message = page(3, 10);
    const limited = responseLimit(GetEntriesResponseSchema, "application/json", 1 << 20)(message);
    expect(toJsonString(GetEntriesResponseSchema, limited)).toBe(
      toJsonString(GetEntriesResponseSchema, message),
    );
  });

  it("refuses a response over the limit with RESOURCE_EXHAUSTED naming --max-message-bytes", () => {
    const message = page(10, 1000);
    const size = toBinary(GetEntriesResponseSchema, message).length;
    const limit = responseLimit(GetEntriesResponseSchema, "application/grpc+proto", size - 1);
    const err = refusal(() => limit(message));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe(
      `response of ${size} bytes exceeds the server's max message size ${size - 1} (--max-message-bytes)`,
    );
    expect(() =>
      responseLimit(GetEntriesResponseSchema, "application/grpc", size)(message),
    ).not.toThrow();
  });

  it("sizes a JSON response as JSON, which is larger than its binary encoding", () => {
    const message = page(10, 1000);
    const binary = toBinary(GetEntriesResponseSchema, message).length;
    const json = Buffer.byteLength(toJsonString(GetEntriesResponseSchema, message));
    const limit = responseLimit(GetEntriesResponseSchema, "application/connect+json", binary);
    expect(refusal(() => limit(message)).rawMessage).toContain(`response of ${json} bytes`);
  });
});
