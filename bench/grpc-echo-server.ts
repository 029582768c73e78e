/**
 * The native gRPC floor: a bare @grpc/grpc-js server (h2c on 127.0.0.1)
 * serving bench/proto's EchoService from the protobuf-es descriptors
 * (toBinary / fromBinary), whose methods do no work: Echo returns its input;
 * Subscribe / Publish fan an event out to N streams. It is what Node itself
 * can serve over gRPC, the baseline of the native-gRPC rows (scenario g).
 * Server CPU is read from /proc/<pid>/stat by the clients.
 *
 * `--durable <dir>`: the durable Append echo. The server also answers
 * sessiond's CreateSession and Append (the bench's sessiond client calls
 * it as it calls sessiond): Append writes its request's bytes as a line to
 * a file in `dir` and fdatasyncs it before answering (lib/durable-lines.ts),
 * and nothing else: no parsing, validation, index, checksum, log or
 * metrics. The least any durable Append costs over this stack.
 */
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type EchoRequest,
  type EchoResponse,
  EchoService,
  type PublishRequest,
  type PublishResponse,
  type SubscribeRequest,
  type SubscribeResponse,
  SubscribeResponseSchema,
} from "../gen/bench/v1/echo_pb.js";
import {
  type AppendResponse,
  AppendResponseSchema,
  SessionService,
} from "../gen/sessiond/v1/session_service_pb.js";
import {
  type CreateSessionResponse,
  CreateSessionResponseSchema,
  StoreService,
} from "../gen/sessiond/v1/store_service_pb.js";
import { serviceDefinition } from "./clients/grpcjs.js";
import { DurableLines } from "./lib/durable-lines.js";

const subscribers = new Set<grpc.ServerWritableStream<SubscribeRequest, SubscribeResponse>>();

const server = new grpc.Server({
  // The connect-node echo server's settings: up to 10,000 streams per
  // connection, 4 MiB requests, 16 MiB responses, no compression.
  "grpc.max_concurrent_streams": 10_000,
  "grpc.max_receive_message_length": 4 * 1024 * 1024,
  "grpc.max_send_message_length": 16 * 1024 * 1024,
});

server.addService(serviceDefinition(EchoService), {
  echo(
    call: grpc.ServerUnaryCall<EchoRequest, EchoResponse>,
    done: grpc.sendUnaryData<EchoResponse>,
  ) {
    const req = call.request;
    done(null, {
      payload: req.responseBytes > 0 ? new Uint8Array(req.responseBytes) : req.payload,
    } as EchoResponse);
  },
  subscribe(call: grpc.ServerWritableStream<SubscribeRequest, SubscribeResponse>) {
    subscribers.add(call);
    const drop = () => subscribers.delete(call);
    call.on("cancelled", drop);
    call.on("close", drop);
    call.on("error", drop);
  },
  publish(
    call: grpc.ServerUnaryCall<PublishRequest, PublishResponse>,
    done: grpc.sendUnaryData<PublishResponse>,
  ) {
    const msg = create(SubscribeResponseSchema, { payload: call.request.payload });
    for (const sub of subscribers) sub.write(msg);
    done(null, { subscribers: subscribers.size } as PublishResponse);
  },
});

const at = process.argv.indexOf("--durable");
const durableDir = at < 0 ? undefined : process.argv[at + 1];
/** 64 files: one per session of the 64-client row. */
const durable = durableDir === undefined ? undefined : new DurableLines(durableDir, 64);
if (durable !== undefined) {
  let sessions = 0;
  let seq = 0n;
  server.addService(serviceDefinition(StoreService), {
    createSession(_call: unknown, done: grpc.sendUnaryData<CreateSessionResponse>) {
      const id = `durable-echo-${++sessions}`;
      done(null, create(CreateSessionResponseSchema, { session: { id }, created: true }));
    },
  });
  // Append's request is not even decoded: its bytes are what gets written.
  const sessionService = serviceDefinition(SessionService);
  const append = { ...sessionService.append, requestDeserialize: (b: Buffer) => b };
  server.addService({ ...sessionService, append } as grpc.ServiceDefinition, {
    append(
      call: grpc.ServerUnaryCall<Buffer, AppendResponse>,
      done: grpc.sendUnaryData<AppendResponse>,
    ) {
      durable.write(call.request).then(
        () => {
          seq++;
          const id = `e${seq}`;
          done(
            null,
            create(AppendResponseSchema, { entries: [{ id, seq }], leafId: id, headSeq: seq }),
          );
        },
        (err: Error) => done(err),
      );
    },
  });
}

server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `grpc-js echo listening on http://127.0.0.1:${port}, ${durableDir === undefined ? "storing nothing" : `fdatasyncing each Append in ${durableDir}`}\n`,
  );
});

process.on("SIGTERM", () => {
  server.forceShutdown();
  durable?.close();
  process.exit(0);
});
