import { Code, ConnectError } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { isUnexpected, toConnectError } from "./errors.js";

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
