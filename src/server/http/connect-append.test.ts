import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AppendRequest,
  AppendResponseSchema,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { appendRequest, userEntry } from "../../../test/integration/support/append-sides.js";
import { exchange } from "../../../test/integration/support/raw-http2.js";
import type { AppendOutcome } from "../../core/codec/append-response-binary.js";
import { notFound } from "../../core/errors.js";
import type { CallRecord } from "../ops/call-log.js";
import { connectAppend } from "./connect-append.js";

/**
 * Which requests the direct Connect Append takes, and what it does with them
 * (a stub append, a `next` that answers 599): that it is the one answering is
 * shown here; that it answers as connect-node does is
 * test/integration/direct-connect-append.test.ts's.
 */
const PATH = "/sessiond.v1.SessionService/Append";
const OUTCOME: AppendOutcome = {
  entries: [{ id: "m1", parentId: "root", seq: 2n, timestamp: undefined }],
  leafId: "m1",
  headSeq: 2,
  deduplicated: false,
};

let server: http2.Http2Server;
let client: http2.ClientHttp2Session;
const seen = {
  appended: [] as { authorization: string | undefined; req: AppendRequest }[],
  next: 0,
  inFlight: 0,
  maxInFlight: 0,
  records: [] as CallRecord[],
  outcome: OUTCOME as AppendOutcome | Error,
  /** recordOf throws (a fault inside the path itself). */
  faulty: false,
};

beforeAll(async () => {
  const handler = connectAppend(
    {
      append: async (authorization, req) => {
        seen.appended.push({ authorization, req });
        const o = seen.outcome;
        if (o instanceof Error) throw o;
        return o;
      },
      inFlight: {
        enter: () => {
          seen.inFlight++;
          seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
        },
        leave: () => {
          seen.inFlight--;
        },
      },
      maxMessageBytes: 1024,
      maxTimeoutMs: 5000,
      recordOf: () => {
        if (seen.faulty) throw new Error("a fault of the path itself");
        const record: CallRecord = {};
        seen.records.push(record);
        return record;
      },
    },
    (_req, res) => {
      seen.next++;
      res.writeHead(599);
      res.end();
    },
  );
  server = http2.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  client.close();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  seen.appended = [];
  seen.next = 0;
  seen.records = [];
  seen.maxInFlight = 0;
  seen.outcome = OUTCOME;
  seen.faulty = false;
});

const body = appendRequest({ workspace: "ws", session: "s1", entries: [userEntry("m1")] });

describe("the direct Connect Append", () => {
  it("answers a binary, uncompressed Append itself: the store's outcome, encoded; the call recorded and counted", async () => {
    const x = await exchange(client, PATH, "application/proto", body, {
      authorization: "Bearer t0k3n",
    });
    expect(x.headers[":status"]).toBe(200);
    expect(x.headers["content-type"]).toBe("application/proto");
    expect(seen.next).toBe(0);
    expect(seen.appended).toHaveLength(1);
    expect(seen.appended[0]?.authorization).toBe("Bearer t0k3n");
    expect(seen.appended[0]?.req.session).toBe("s1");
    expect(seen.appended[0]?.req.entries[0]?.id).toBe("m1");
    const res = fromBinary(AppendResponseSchema, x.body);
    expect(res.entries.map((e) => [e.id, e.parentId, e.seq])).toEqual([["m1", "root", 2n]]);
    expect(res.headSeq).toBe(2n);
    expect(seen.records).toEqual([
      {
        method: "sessiond.v1.SessionService/Append",
        workspace: "ws",
        session: "s1",
        succeeded: true,
      },
    ]);
    expect(seen.maxInFlight).toBe(1);
    expect(seen.inFlight).toBe(0);
  });

  it("a refusal of the store: the Connect error, recorded", async () => {
    seen.outcome = notFound('session "s1" not found');
    const x = await exchange(client, PATH, "application/proto", body);
    expect(x.headers[":status"]).toBe(404);
    expect(JSON.parse(x.body.toString())).toEqual({
      code: "not_found",
      message: 'session "s1" not found',
    });
    expect(seen.records[0]?.error).toBe(seen.outcome);
    expect(seen.records[0]?.succeeded).toBeUndefined();
    expect(seen.inFlight).toBe(0);
  });

  it("an answer over the max message size is RESOURCE_EXHAUSTED, as the edge refuses it", async () => {
    seen.outcome = { ...OUTCOME, leafId: "x".repeat(2000) };
    const x = await exchange(client, PATH, "application/proto", body);
    expect(x.headers[":status"]).toBe(429);
    expect(JSON.parse(x.body.toString()).message).toMatch(/exceeds the server's max message size/);
    expect(seen.records[0]?.succeeded).toBeUndefined();
  });

  it("refuses a bad deadline and an undecodable body before the store and before a record", async () => {
    const late = await exchange(client, PATH, "application/proto", body, {
      "connect-timeout-ms": "6000",
    });
    expect(JSON.parse(late.body.toString())).toEqual({
      code: "invalid_argument",
      message: "timeout 6000ms must be <= 5000",
    });
    const bad = await exchange(client, PATH, "application/proto", Buffer.from([0x0a, 0x7f]));
    expect(JSON.parse(bad.body.toString()).code).toBe("invalid_argument");
    expect(seen.appended).toHaveLength(0);
    expect(seen.records).toHaveLength(0);
    expect(seen.next).toBe(0);
  });

  it("a fault of its own is an INTERNAL answer, never an unhandled rejection: the next call is served", async () => {
    seen.faulty = true;
    const x = await exchange(client, PATH, "application/proto", body);
    expect(x.headers[":status"]).toBe(500);
    expect(JSON.parse(x.body.toString())).toEqual({ code: "internal", message: "internal error" });
    seen.faulty = false;
    const y = await exchange(client, PATH, "application/proto", body);
    expect(y.headers[":status"]).toBe(200);
  });

  it("leaves everything else to connect-node: JSON, compressed, another type, path or method", async () => {
    const others: [string, string, http2.OutgoingHttpHeaders][] = [
      [PATH, "application/json", {}],
      [PATH, "application/proto", { "content-encoding": "gzip" }],
      [PATH, "application/proto; charset=utf-8", {}],
      [PATH, "application/connect+proto", {}],
      ["/sessiond.v1.SessionService/Rewind", "application/proto", {}],
      [`${PATH}?x=1`, "application/proto", {}],
      [PATH, "application/proto", { ":method": "PUT" }],
    ];
    for (const [path, type, extra] of others) {
      const x = await exchange(client, path, type, body, extra);
      expect(x.headers[":status"], `${path} ${type} ${JSON.stringify(extra)}`).toBe(599);
    }
    expect(seen.next).toBe(others.length);
    expect(seen.appended).toHaveLength(0);
  });
});
