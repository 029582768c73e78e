/**
 * Row 4: GetState of the big bushy session, warm, against the echo of the
 * same bytes: the echo server answers with the GetStateResponse's own bytes
 * (published to it once) and this client decodes them as a
 * GetStateResponse, as it decodes sessiond's answer (the baseline since
 * issue 40; the same bytes left undecoded, the earlier baseline, are timed
 * too, for the record). The servers are called from this process in
 * alternating blocks (so drift of a noisy machine hits both alike).
 * Args: {sessiondUrl, echoUrl, sessionId, warmup, rounds, perRound}.
 * Prints {sessiond: ms[], echo: ms[], echoOpaque: ms[], responseBytes,
 * messages, clientDecodeMs}.
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
await e.publish({ payload: bytes });
/** The echo of the same bytes, decoded as sessiond's answer is. */
async function echoDecoded() {
  const r = await e.echo({ responseBytes });
  if (!Buffer.from(r.payload).equals(Buffer.from(bytes))) {
    throw new Error("echo returned other bytes");
  }
  return fromBinary(GetStateResponseSchema, r.payload);
}
for (let i = 0; i < a.warmup; i++) await echoDecoded();

const sd: number[] = [];
const ec: number[] = [];
const opaque: number[] = [];
for (let r = 0; r < a.rounds; r++) {
  for (let i = 0; i < a.perRound; i++) {
    sd.push((await timed(() => s.session.getState({ session: a.sessionId }))).ms);
  }
  for (let i = 0; i < a.perRound; i++) {
    const { ms, value } = await timed(echoDecoded);
    if (value.state?.messages.length !== messages) throw new Error("echo decoded other state");
    ec.push(ms);
  }
  for (let i = 0; i < a.perRound / 4; i++) {
    const { ms, value } = await timed(() => e.echo({ responseBytes }));
    if (value.payload.length !== responseBytes) throw new Error("echo returned a wrong size");
    opaque.push(ms);
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
  echoOpaque: opaque,
  firstCallMs: first.ms,
  responseBytes,
  messages,
  clientDecodeMs: decode[decode.length >> 1],
});
