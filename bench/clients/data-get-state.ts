/**
 * Row 4: GetState of the big bushy session, warm, against the echo of a
 * response of the same size. Both servers are called from this process in
 * alternating blocks (so drift of a noisy machine hits both alike).
 * Args: {sessiondUrl, echoUrl, sessionId, warmup, rounds, perRound}.
 * Prints {sessiond: ms[], echo: ms[], responseBytes, messages, clientDecodeMs}.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { GetStateResponseSchema } from "../../gen/sessiond/v1/session_service_pb.js";
import { answer, args, echo, sessiond, timed } from "./data-common.js";

const a = args<{
  sessiondUrl: string;
  echoUrl: string;
  sessionId: string;
  warmup: number;
  rounds: number;
  perRound: number;
}>();
const s = sessiond(a.sessiondUrl);
const e = echo(a.echoUrl);

// Warm: the first call loads the session into the server's cache.
const first = await timed(() => s.session.getState({ session: a.sessionId }));
const bytes = toBinary(GetStateResponseSchema, first.value);
const responseBytes = bytes.length;
const messages = first.value.state?.messages.length ?? 0;
for (let i = 1; i < a.warmup; i++) await s.session.getState({ session: a.sessionId });
for (let i = 0; i < a.warmup; i++) await e.echo({ responseBytes });

const sd: number[] = [];
const ec: number[] = [];
for (let r = 0; r < a.rounds; r++) {
  for (let i = 0; i < a.perRound; i++) {
    sd.push((await timed(() => s.session.getState({ session: a.sessionId }))).ms);
  }
  for (let i = 0; i < a.perRound; i++) {
    const { ms, value } = await timed(() => e.echo({ responseBytes }));
    if (value.payload.length !== responseBytes) throw new Error("echo returned a wrong size");
    ec.push(ms);
  }
}

// How much of a GetState call is the client decoding the response (for the record).
const decode: number[] = [];
for (let i = 0; i < 20; i++) {
  const t0 = performance.now();
  fromBinary(GetStateResponseSchema, bytes);
  decode.push(performance.now() - t0);
}
decode.sort((x, y) => x - y);
answer({
  sessiond: sd,
  echo: ec,
  firstCallMs: first.ms,
  responseBytes,
  messages,
  clientDecodeMs: decode[decode.length >> 1],
});
