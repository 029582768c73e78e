import { describe, expect, it } from "vitest";
import { formatTraceParent, parseTraceParent } from "./traceparent.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("traceparent", () => {
  it("reads the spec's example and writes it back the same", () => {
    const header = `00-${TRACE}-${SPAN}-01`;
    const parsed = parseTraceParent(header);
    expect(parsed).toEqual({ traceId: TRACE, spanId: SPAN, flags: 1 });
    expect(formatTraceParent(parsed as NonNullable<typeof parsed>)).toBe(header);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["upper-case hex", `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${SPAN}-01`],
    ["an all-zero span id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE}-${SPAN}-01`],
    ["version 00 with a fifth field", `00-${TRACE}-${SPAN}-01-extra`],
    ["a short trace id", `00-${TRACE.slice(1)}-${SPAN}-01`],
    ["something before the version", `x00-${TRACE}-${SPAN}-01`],
    ["something after the flags with no dash", `00-${TRACE}-${SPAN}-01zz`],
  ])("refuses %s (a new trace starts instead)", (_what, header) => {
    expect(parseTraceParent(header)).toBeUndefined();
  });

  it("reads a later version's four fields and ignores what it appends", () => {
    expect(parseTraceParent(`01-${TRACE}-${SPAN}-00-more`)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 0,
    });
  });

  it("reads a header with white space around it", () => {
    expect(parseTraceParent(`  00-${TRACE}-${SPAN}-01 `)).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      flags: 1,
    });
  });
});
