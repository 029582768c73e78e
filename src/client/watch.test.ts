import { create } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  type WatchEntriesResponse,
  WatchEntriesResponseSchema,
} from "../../gen/sessiond/v1/session_service_pb.js";
import type { SessiondClient } from "./sessiond-client.js";
import { watchEntriesResumable } from "./watch.js";

function entry(seq: number): WatchEntriesResponse {
  return create(WatchEntriesResponseSchema, {
    event: { case: "entry", value: create(EntrySchema, { id: `e${seq}`, seq: BigInt(seq) }) },
  });
}

/**
 * A client whose first WatchEntries stream sends entries 1..2 and then
 * hangs for good, its abort signal ignored (as connect-node can leave a
 * call whose stream was cut: connectrpc/connect-es#1678); later streams
 * send the entries after their after_seq up to 5 and stay open until
 * aborted. Records each stream's after_seq.
 */
function hangingClient(): { client: SessiondClient; opened: bigint[] } {
  const opened: bigint[] = [];
  const watchEntries = (req: { afterSeq: bigint }, opts: { signal: AbortSignal }) => {
    opened.push(req.afterSeq);
    const first = opened.length === 1;
    return (async function* () {
      for (let seq = Number(req.afterSeq) + 1; seq <= (first ? 2 : 5); seq++) yield entry(seq);
      if (first) await new Promise(() => {}); // never settles, whatever the signal does
      await new Promise<void>((resolve) => opts.signal.addEventListener("abort", () => resolve()));
    })();
  };
  return { client: { session: { watchEntries } } as unknown as SessiondClient, opened };
}

/** What the watch delivers within `waitMs` (stopping at 5 entries), and its reconnects. */
async function collect(
  client: SessiondClient,
  stallTimeoutMs: number,
  waitMs: number,
): Promise<{ seqs: number[]; reconnects: ConnectError[] }> {
  const ac = new AbortController();
  const seqs: number[] = [];
  const reconnects: ConnectError[] = [];
  const watch = watchEntriesResumable(client, {
    session: "s",
    signal: ac.signal,
    retryDelayMs: 1,
    stallTimeoutMs,
    onReconnect: (err) => reconnects.push(err),
  });
  const consumed = (async () => {
    for await (const m of watch) {
      if (m.event.case === "entry") seqs.push(Number(m.event.value.seq));
      if (seqs.length === 5) return;
    }
  })();
  // Raced: a watch stuck on a call that never settles would never end by itself.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([consumed, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  ac.abort();
  return { seqs: [...seqs], reconnects };
}

describe("watchEntriesResumable on a stream that falls silent", () => {
  it("gives the stream up after stallTimeoutMs and resumes after the last seq it delivered", async () => {
    const { client, opened } = hangingClient();
    const { seqs, reconnects } = await collect(client, 100, 10_000);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect(opened).toEqual([0n, 2n]);
    expect(reconnects.map((e) => e.rawMessage)).toEqual([
      "no message from the server in 100 ms (not even a heartbeat): reopening the watch",
    ]);
  });

  it("negative control: with stallTimeoutMs 0 it waits on the silent stream", async () => {
    const { client, opened } = hangingClient();
    const { seqs, reconnects } = await collect(client, 0, 500);
    expect(seqs).toEqual([1, 2]);
    expect(opened).toEqual([0n]);
    expect(reconnects).toEqual([]);
  });
});
