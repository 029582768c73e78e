/**
 * The transport floor: a connect-node server on the same stack and settings
 * as sessiond (HTTP/2 cleartext, gRPC + gRPC-Web + Connect, one interceptor
 * like sessiond's edge) whose methods do no work. Echo returns its input;
 * Subscribe/Publish fan an event out to N streams. Echo with response_bytes
 * = N returns N bytes: the last published payload when it has exactly that
 * length (row 4 publishes a GetStateResponse's bytes once and then has them
 * echoed, to decode them as sessiond's client does), else N zero bytes.
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  EchoService,
  type SubscribeResponse,
  SubscribeResponseSchema,
} from "../gen/bench/v1/echo_pb.js";

type Waiter = (msg: SubscribeResponse) => void;
const subscribers = new Set<{ queue: SubscribeResponse[]; wake: Waiter | undefined }>();
/** The last payload published: what Echo answers a request for its length with. */
let published: Uint8Array | undefined;

const handler = connectNodeAdapter({
  // Same as sessiond's default: no response compression.
  acceptCompression: [],
  readMaxBytes: 4 * 1024 * 1024,
  writeMaxBytes: 16 * 1024 * 1024,
  routes(router) {
    router.service(EchoService, {
      echo(req) {
        if (req.responseBytes <= 0) return { payload: req.payload };
        return {
          payload:
            published?.length === req.responseBytes ? published : new Uint8Array(req.responseBytes),
        };
      },
      async *subscribe(_req, ctx) {
        const sub = { queue: [] as SubscribeResponse[], wake: undefined as Waiter | undefined };
        subscribers.add(sub);
        try {
          for (;;) {
            const next =
              sub.queue.shift() ??
              (await new Promise<SubscribeResponse | undefined>((done) => {
                sub.wake = done;
                ctx.signal.addEventListener("abort", () => done(undefined), { once: true });
              }));
            sub.wake = undefined;
            if (next === undefined) return;
            yield next;
          }
        } finally {
          subscribers.delete(sub);
        }
      },
      publish(req) {
        published = req.payload;
        const msg = create(SubscribeResponseSchema, { payload: req.payload });
        for (const sub of subscribers) {
          const wake = sub.wake;
          sub.wake = undefined;
          if (wake) wake(msg);
          else sub.queue.push(msg);
        }
        return { subscribers: subscribers.size };
      },
    });
  },
});

// sessiond's receive windows (src/server/server.ts): 2 MiB a stream, 16 MiB a connection.
const server = http2.createServer(
  { settings: { maxConcurrentStreams: 10_000, initialWindowSize: 2 * 1024 * 1024 } },
  handler,
);
const sessions = new Set<http2.ServerHttp2Session>();
server.on("session", (s) => {
  sessions.add(s);
  s.on("close", () => sessions.delete(s));
  s.once("connect", () => s.setLocalWindowSize(16 * 1024 * 1024));
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`echo listening on http://127.0.0.1:${port}, storing nothing\n`);
});
process.on("SIGTERM", () => {
  server.close();
  for (const s of sessions) s.destroy();
  process.exit(0);
});
