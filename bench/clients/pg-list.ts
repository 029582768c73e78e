/**
 * Row 10/list: ListSessions first page over native gRPC with a
 * @grpc/grpc-js client (one connection), the client stack of scenario 10's
 * other rows and of its grpc-js echo baseline. The service definition and
 * (de)serializers are bench/clients/grpcjs.ts's. Warm-up, then `n` timed
 * calls; every page must hold `pageSize` sessions starting at `expectFirst`.
 * Args: {url, pageSize, warmup, n, expectFirst?}. Prints a Summary and the
 * first call's ms.
 */
import * as grpc from "@grpc/grpc-js";
import {
  type ListSessionsRequest,
  type ListSessionsResponse,
  StoreService,
} from "../../gen/sessiond/v1/store_service_pb.js";
import { summarize } from "../lib/stats.js";
import { serviceDefinition } from "./grpcjs.js";
import { answer, args, log, now } from "./rpc-common.js";

const a = args<{
  url: string;
  pageSize: number;
  warmup: number;
  n: number;
  expectFirst?: string;
}>();

const Ctor = grpc.makeGenericClientConstructor(serviceDefinition(StoreService), "StoreService");
const store = new Ctor(new URL(a.url).host, grpc.credentials.createInsecure(), {
  "grpc.use_local_subchannel_pool": 1,
  "grpc.max_receive_message_length": 64 * 1024 * 1024,
}) as unknown as grpc.Client & {
  listSessions: (
    req: Partial<ListSessionsRequest>,
    cb: (err: grpc.ServiceError | null, res: ListSessionsResponse) => void,
  ) => void;
};

function list(): Promise<ListSessionsResponse> {
  return new Promise((resolve, reject) => {
    store.listSessions({ pageSize: a.pageSize }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

async function call(): Promise<void> {
  const res = await list();
  if (
    res.sessions.length !== a.pageSize ||
    (a.expectFirst && res.sessions[0]?.id !== a.expectFirst)
  ) {
    throw new Error(
      `first page has ${res.sessions.length} sessions starting at ${res.sessions[0]?.id}, expected ${a.pageSize} starting at ${a.expectFirst}`,
    );
  }
}

const t0 = now();
await call();
const firstMs = now() - t0;
for (let i = 0; i < a.warmup; i++) await call();
const samples: number[] = [];
for (let i = 0; i < a.n; i++) {
  const t = now();
  await call();
  samples.push(now() - t);
}
store.close();
const s = summarize(samples);
log(`ListSessions first page over grpc-js: p50 ${s.p50.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`);
answer({ ...s, firstMs });
