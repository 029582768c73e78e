import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { formatDuration, formatProgress, Progress } from "./progress.js";

describe("formatProgress", () => {
  it("shows counts, percentage, rate and ETA", () => {
    expect(formatProgress({ done: 1200, total: 5000, elapsedMs: 4000, unit: "entries" })).toBe(
      "1,200/5,000 entries (24%)  300/s  ETA 0:13",
    );
  });

  it("shows slow rates with a decimal and long ETAs with hours", () => {
    expect(formatProgress({ done: 3, total: 20_000, elapsedMs: 6000, unit: "files" })).toBe(
      "3/20,000 files (0%)  0.5/s  ETA 11:06:34",
    );
  });

  it("leaves out rate and ETA before any time has passed, and ETA without a total", () => {
    expect(formatProgress({ done: 5, total: 10, elapsedMs: 50, unit: "files" })).toBe(
      "5/10 files (50%)",
    );
    expect(formatProgress({ done: 50, elapsedMs: 1000, unit: "entries" })).toBe("50 entries  50/s");
  });

  it("formats durations as m:ss and h:mm:ss", () => {
    expect(formatDuration(0)).toBe("0:00");
    expect(formatDuration(65)).toBe("1:05");
    expect(formatDuration(3723)).toBe("1:02:03");
  });
});

describe("Progress", () => {
  it("draws in place on its stream and clears the line at the end", () => {
    const stream = new PassThrough();
    let out = "";
    stream.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const p = new Progress(stream, "import", "entries", 10);
    p.advance(4);
    p.clear();
    expect(out).toBe("\r\x1b[2Kimport 4/10 entries (40%)\r\x1b[2K");
  });

  it("writes nothing without a stream (piped output, --json)", () => {
    const p = new Progress(undefined, "import", "entries", 10);
    expect(() => {
      p.advance(10);
      p.clear();
    }).not.toThrow();
  });
});
