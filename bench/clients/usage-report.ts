/**
 * Scenario u: UsageReport of one day (hour buckets, by model, by the team
 * tag) on a server: the first call timed, then `warm` more.
 * Args: {url, startMs, warm}. Prints {firstMs, warm: ms[], messages, sessions, rows}.
 */
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { UsageBucket } from "../../gen/sessiond/v1/store_service_pb.js";
import { answer, args, sessiond, timed } from "./data-common.js";

const a = args<{ url: string; startMs: number; warm: number }>();
const c = sessiond(a.url);
await c.health.check({ service: "" });
await c.health.check({ service: "" });

const call = () =>
  c.store.usageReport({
    start: timestampFromMs(a.startMs),
    end: timestampFromMs(a.startMs + 86_400_000),
    bucket: UsageBucket.HOUR,
    byModel: true,
    groupByTags: ["team"],
  });

const first = await timed(call);
const warm: number[] = [];
for (let i = 0; i < a.warm; i++) warm.push((await timed(call)).ms);
answer({
  firstMs: first.ms,
  warm,
  messages: Number(first.value.total?.messages ?? 0n),
  sessions: Number(first.value.sessions),
  rows: first.value.rows.length,
});
