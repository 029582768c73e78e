import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ReconnectNotes } from "./reconnect-notes.js";

const refused = new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable);

/** Notes over a clock the test moves by hand. */
function notes() {
  let clock = 1_000_000;
  const n = new ReconnectNotes("http://127.0.0.1:1", 10_000, () => clock);
  return { n, advance: (ms: number) => (clock += ms) };
}

describe("ReconnectNotes", () => {
  it("says once that the connection is lost, with the error and the seq it resumes after", () => {
    const { n } = notes();
    expect(n.failed(refused, 7n)).toBe(
      "connection lost (connect ECONNREFUSED 127.0.0.1:1 (unavailable)); reconnecting after seq 7",
    );
  });

  it("stays quiet for failed attempts within the interval", () => {
    const { n, advance } = notes();
    n.failed(refused, 0n);
    advance(9_999);
    expect(n.failed(refused, 0n)).toBeUndefined();
  });

  it("reminds that it is still reconnecting once the interval has passed, with the attempt count", () => {
    const { n, advance } = notes();
    n.failed(refused, 0n);
    advance(4_000);
    n.failed(refused, 0n);
    advance(6_000);
    expect(n.failed(refused, 0n)).toBe(
      "still reconnecting to http://127.0.0.1:1 (attempt 3, last error: connect ECONNREFUSED 127.0.0.1:1 (unavailable))",
    );
    advance(1);
    expect(n.failed(refused, 0n)).toBeUndefined();
  });

  it("says reconnected once after a disconnect, and counts afresh after it", () => {
    const { n, advance } = notes();
    expect(n.delivered()).toBeUndefined();
    n.failed(refused, 0n);
    n.failed(refused, 0n);
    expect(n.delivered()).toBe("reconnected");
    expect(n.delivered()).toBeUndefined();
    advance(60_000);
    expect(n.failed(refused, 3n)).toMatch(/^connection lost/);
  });
});
