import { EventEmitter } from "node:events";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type AnyCall, CallEnd, LiveCalls } from "./call-context.js";

/** What CallEnd reads of a grpc-js call: `cancelled` and its 'cancelled' event. */
function fakeCall(cancelled = false): AnyCall & EventEmitter {
  return Object.assign(new EventEmitter(), { cancelled }) as unknown as AnyCall & EventEmitter;
}

/** A client cancel as grpc-js reports it: the flag, then the event. */
function cancel(call: AnyCall & EventEmitter): void {
  (call as { cancelled: boolean }).cancelled = true;
  call.emit("cancelled", "cancelled");
}

const codeOf = (signal: AbortSignal) => (signal.reason as ConnectError).code;

describe("CallEnd: the call's signal, made when first read", () => {
  it("a client cancel before the signal is read: the signal starts aborted, CANCELED", () => {
    const call = fakeCall();
    const end = new CallEnd(call, new LiveCalls(new AbortController().signal));
    cancel(call);
    expect(end.signal.aborted).toBe(true);
    expect(codeOf(end.signal)).toBe(Code.Canceled);
  });

  it("a signal read first aborts when the client cancels", () => {
    const call = fakeCall();
    const end = new CallEnd(call, new LiveCalls(new AbortController().signal));
    const signal = end.signal;
    expect(signal.aborted).toBe(false);
    cancel(call);
    expect(signal.aborted).toBe(true);
    expect(end.signal).toBe(signal);
  });

  it("keeps the first reason: a deadline, then the call's end", () => {
    const end = new CallEnd(fakeCall(), new LiveCalls(new AbortController().signal));
    end.abort(new ConnectError("late", Code.DeadlineExceeded));
    end.finish();
    expect(codeOf(end.signal)).toBe(Code.DeadlineExceeded);
  });

  it("a call that has ended has an aborted signal, read before or after", () => {
    const before = new CallEnd(fakeCall(), new LiveCalls(new AbortController().signal));
    const signal = before.signal;
    before.finish();
    expect(signal.aborted).toBe(true);
    const after = new CallEnd(fakeCall(), new LiveCalls(new AbortController().signal));
    after.finish();
    expect(after.signal.aborted).toBe(true);
  });

  it("a call already cancelled when it begins is aborted", () => {
    const end = new CallEnd(fakeCall(true), new LiveCalls(new AbortController().signal));
    expect(codeOf(end.signal)).toBe(Code.Canceled);
  });

  it("listens for the client's cancel only once its signal is read, and no more after the call ends", () => {
    const call = fakeCall();
    const end = new CallEnd(call, new LiveCalls(new AbortController().signal));
    expect(call.listenerCount("cancelled")).toBe(0);
    void end.signal;
    expect(call.listenerCount("cancelled")).toBe(1);
    end.finish();
    expect(call.listenerCount("cancelled")).toBe(0);
  });
});

describe("LiveCalls: server shutdown reaches the calls in progress", () => {
  const unavailable = new ConnectError("shutting down", Code.Unavailable);

  it("aborts live calls, read signal or not, with the shutdown reason", () => {
    const shutdown = new AbortController();
    const live = new LiveCalls(shutdown.signal);
    const read = new CallEnd(fakeCall(), live);
    const signal = read.signal;
    const unread = new CallEnd(fakeCall(), live);
    shutdown.abort(unavailable);
    expect(signal.reason).toBe(unavailable);
    expect(unread.signal.reason).toBe(unavailable);
  });

  it("leaves calls that have ended alone", () => {
    const shutdown = new AbortController();
    const live = new LiveCalls(shutdown.signal);
    const end = new CallEnd(fakeCall(), live);
    end.finish();
    shutdown.abort(unavailable);
    expect(codeOf(end.signal)).toBe(Code.Canceled);
  });

  it("a call that begins during shutdown starts aborted", () => {
    const shutdown = new AbortController();
    const live = new LiveCalls(shutdown.signal);
    shutdown.abort(unavailable);
    expect(new CallEnd(fakeCall(), live).signal.reason).toBe(unavailable);
  });
});
