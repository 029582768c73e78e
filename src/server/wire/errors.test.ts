import { Code, ConnectError } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { isUnexpected, restated, sentNoRequest, toConnectError } from "./errors.js";

/**
 * Regression (seen once in CI): a WatchSessions client that left while the
 * server wrote its next event made connect-node throw Node's
 * ERR_HTTP2_INVALID_STREAM into the handler, which was answered and logged
 * as INTERNAL with a stack. The client went away: CANCELED, not a fault.
 */
it("a write to a stream the client already closed is CANCELED, not INTERNAL", () => {
  const gone = Object.assign(new Error("The stream has been destroyed"), {
    code: "ERR_HTTP2_INVALID_STREAM",
  });
  expect(toConnectError(gone).code).toBe(Code.Canceled);
  expect(isUnexpected(gone)).toBe(false);
});

it("the AbortError of a call whose client closed its stream is CANCELED, not INTERNAL", () => {
  // connect-node aborts the call's signal with no reason when an HTTP/1.1
  // response closes first (a browser leaving a watch stream).
  const controller = new AbortController();
  controller.abort();
  const gone: unknown = controller.signal.reason;
  expect(toConnectError(gone).code).toBe(Code.Canceled);
  expect(isUnexpected(gone)).toBe(false);
});

it("connect-node's ABORTED for an HTTP/1.1 socket the client reset is CANCELED", () => {
  const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  const aborted = new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, reset);
  expect(toConnectError(aborted).code).toBe(Code.Canceled);
  expect(isUnexpected(aborted)).toBe(false);
});

it("an ABORTED the server meant (a lost race) stays ABORTED", () => {
  const conflict = new ConnectError("the session changed", Code.Aborted);
  expect(toConnectError(conflict)).toBe(conflict);
});

it("any other unexpected error stays INTERNAL, with no details for the client", () => {
  const bug = Object.assign(new Error("something broke at /srv/x.ts:12"), { code: "EWHATEVER" });
  const e = toConnectError(bug);
  expect(e.code).toBe(Code.Internal);
  expect(e.rawMessage).toBe("internal error");
  expect(isUnexpected(bug)).toBe(true);
});

it("connect-es's answer to a request that does not parse is INVALID_ARGUMENT; other INTERNALs stay", () => {
  const parse = new ConnectError("parse binary: premature EOF", Code.Internal);
  const mapped = toConnectError(parse);
  expect(mapped.code).toBe(Code.InvalidArgument);
  expect(mapped.rawMessage).toBe("parse binary: premature EOF");
  expect(isUnexpected(mapped)).toBe(false);
  const other = new ConnectError("parse binary: premature EOF", Code.Unavailable);
  expect(toConnectError(other)).toBe(other);
  const ours = new ConnectError("internal error", Code.Internal);
  expect(toConnectError(ours)).toBe(ours);
});

it.each([
  ["connect-es, size known", "message size 100030 is larger than configured readMaxBytes 65536"],
  ["connect-es, size unknown", "message size is larger than configured readMaxBytes 65536"],
  ["grpc-js", "Received message larger than max (100024 vs 65536)"],
  ["grpc-js, compressed", "Received message that decompresses to a size larger than 65536"],
])("a request over the max message size (%s) names the flags that raise it", (_, message) => {
  const e = restated(Code.ResourceExhausted, message);
  expect(e?.code).toBe(Code.ResourceExhausted);
  expect(e?.rawMessage).toMatch(
    /max message size of 65536 bytes: raise the server's --max-message-bytes/,
  );
  expect(e?.rawMessage).toMatch(/--max-entry-bytes/);
});

it("a RESOURCE_EXHAUSTED of sessiond's own is not restated", () => {
  expect(restated(Code.ResourceExhausted, "too many watchers on session s")).toBeUndefined();
});

it.each([
  ["grpc-js", "Received no request message"],
  ["connect-es", "protocol error: missing input message for unary method"],
])("a call with no request message (%s) is one the client gave up", (_, message) => {
  expect(sentNoRequest(Code.Unimplemented, message)).toBe(true);
});

it("an UNIMPLEMENTED for anything else is not the client's cancel", () => {
  expect(sentNoRequest(Code.Unimplemented, 'unknown compression "zstd"')).toBe(false);
  expect(sentNoRequest(Code.InvalidArgument, "Received no request message")).toBe(false);
});
