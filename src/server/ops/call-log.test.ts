/**
 * When a call's log line and metrics are made: after the JS of the turn in
 * which the call ended (so HTTP/2 writes the call's last bytes first),
 * timed at the end of the call, once per call, and still at exit.
 */
import { setImmediate as immediate } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { importLine, stdoutAtExit } from "../../../test/support/exit-child.js";
import { CallLog } from "./call-log.js";
import { Logger } from "./logger.js";

function callLog() {
  const lines: Record<string, unknown>[] = [];
  const observed: unknown[][] = [];
  const log = new CallLog(new Logger("info", (line) => lines.push(JSON.parse(line))), (...args) =>
    observed.push(args),
  );
  return { log, lines, observed };
}

/** Blocks the thread for `ms` (a turn that takes that long). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

describe("CallLog: a native gRPC call's line", () => {
  it("is made after the turn the call ended in, timed at its end", async () => {
    const { log, lines, observed } = callLog();
    const before = performance.now();
    const call = log.stream("/sessiond.v1.SessionService/Append");
    call.record.method = "sessiond.v1.SessionService/Append";
    call.responded({ ":status": 200 }, false);
    call.done({ "grpc-status": "0" });
    const ended = performance.now() - before;
    // The rest of the turn: still no line, no metrics.
    busy(30);
    expect(lines).toEqual([]);
    expect(observed).toEqual([]);
    await immediate();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      method: "sessiond.v1.SessionService/Append",
      code: "ok",
      via: "grpc-js",
      level: "info",
    });
    // Timed when the call ended, not when the line was made 30 ms later.
    expect(lines[0]?.ms).toBeLessThanOrEqual(Math.round(ended * 100) / 100 + 0.01);
    expect(observed).toEqual([["sessiond.v1.SessionService/Append", "ok", expect.any(Number)]]);
  });

  it("is made once, whatever ends the call first (trailers, then the stream's close)", async () => {
    const { log, lines } = callLog();
    const call = log.stream("/sessiond.v1.StoreService/GetSession");
    call.responded({ ":status": 200 }, false);
    call.done({ "grpc-status": "5", "grpc-message": "not%20found" });
    call.done(undefined);
    await immediate();
    await immediate();
    expect(lines.map((l) => l.code)).toEqual(["NotFound"]);
  });

  it("is written when the process exits in the turn the call ended in", () => {
    const here = (name: string) => new URL(`./${name}`, import.meta.url);
    const out = stdoutAtExit([
      importLine("{ CallLog }", here("call-log.ts")),
      importLine("{ Logger }", here("logger.ts")),
      importLine("{ batchedLines }", here("log-batch.ts")),
      "const logger = new Logger('info', batchedLines((chunk) => process.stdout.write(chunk)));",
      "logger.write('info', { msg: 'started' });",
      "const call = new CallLog(logger, undefined).stream('/x.v1.S/M');",
      "call.responded({ ':status': 200 }, false);",
      "call.done({ 'grpc-status': '0' });",
      "process.exit(3);",
    ]);
    const lines = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg ?? l.method)).toEqual(["started", "x.v1.S/M"]);
  });
});
