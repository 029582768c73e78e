/**
 * The native gRPC floor: a bare @grpc/grpc-js server (h2c on 127.0.0.1)
 * serving bench/proto's EchoService from the protobuf-es descriptors
 * (toBinary / fromBinary), whose methods do no work: Echo returns its input;
 * Subscribe / Publish fan an event out to N streams. It is what Node itself
 * can serve over gRPC, the baseline of the native-gRPC rows (scenario g).
 * Server CPU is read from /proc/<pid>/stat by the clients.
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
import { serviceDefinition } from "./clients/grpcjs.js";

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

server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`grpc-js echo listening on http://127.0.0.1:${port}, storing nothing\n`);
});

process.on("SIGTERM", () => {
  server.forceShutdown();
  process.exit(0);
});
