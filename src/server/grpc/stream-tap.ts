import type { OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { StreamCallLog } from "../ops/call-log.js";
import { restatedStatus } from "./wire-status.js";

/**
 * What must see the status grpc-js sends on a native gRPC stream: the
 * request log (the status as sent, call-log.ts) and the status fix-ups
 * (wire-status.ts), one of which needs the bytes the client sent. The
 * stream's `respond` and `sendTrailers` are replaced by functions shared by
 * every stream, which find the stream's state in a WeakMap and call the
 * stream's own (prototype) methods: a stream costs one small object here,
 * not closures and bound functions per hook (a server keeps them for each
 * of its thousands of idle watch streams).
 */
export function tapStream(stream: ServerHttp2Stream, log: StreamCallLog): void {
  taps.set(stream, { log, received: 0 });
  stream.on("data", countReceived);
  // Closed with no status sent: the client left (or reset the stream) first.
  stream.on("close", closed);
  stream.respond = tappedRespond;
  stream.sendTrailers = tappedSendTrailers;
}

/** Kept aside, not as a property of the stream: one more property turns its shape into a dictionary. */
const taps = new WeakMap<ServerHttp2Stream, Tap>();

interface Tap {
  readonly log: StreamCallLog;
  received: number;
}

function tapOf(stream: ServerHttp2Stream): Tap {
  return taps.get(stream) as Tap;
}

/** The stream class's own method, which the own property set here shadows. */
function own<K extends "respond" | "sendTrailers">(stream: ServerHttp2Stream, name: K) {
  return (Object.getPrototypeOf(stream) as ServerHttp2Stream)[name];
}

function countReceived(this: ServerHttp2Stream, chunk: Buffer): void {
  tapOf(this).received += chunk.length;
}

function closed(this: ServerHttp2Stream): void {
  tapOf(this).log.done(undefined);
}

function tappedRespond(
  this: ServerHttp2Stream,
  headers?: OutgoingHttpHeaders,
  options?: Parameters<ServerHttp2Stream["respond"]>[1],
): void {
  const tap = tapOf(this);
  const fixed = headers && restatedStatus(headers, tap.received);
  try {
    own(this, "respond").call(this, fixed, options);
  } finally {
    tap.log.responded(fixed, options?.endStream === true);
  }
}

function tappedSendTrailers(this: ServerHttp2Stream, trailers: OutgoingHttpHeaders): void {
  const tap = tapOf(this);
  const fixed = restatedStatus(trailers, tap.received);
  try {
    own(this, "sendTrailers").call(this, fixed);
  } finally {
    tap.log.done(fixed);
  }
}
