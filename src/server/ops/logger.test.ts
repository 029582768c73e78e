import { afterEach, describe, expect, it, vi } from "vitest";
import { isoNow, Logger } from "./logger.js";

function linesAt(level: "error" | "warn" | "info" | "debug") {
  const lines: string[] = [];
  return { logger: new Logger(level, (l) => lines.push(l)), lines };
}

describe("Logger", () => {
  it("writes the fields as one JSON object with its level last", () => {
    const { logger, lines } = linesAt("info");
    const fields = {
      time: "t",
      method: 'a"b\\c\n',
      ms: 1.5,
      nested: { x: [1, null] },
      gone: undefined,
    };
    logger.write("info", fields);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(JSON.stringify({ ...fields, level: "info" }));
    expect(Object.keys(JSON.parse(lines[0] as string))).toEqual([
      "time",
      "method",
      "ms",
      "nested",
      "level",
    ]);
    // The caller's object is left as it was.
    expect("level" in fields).toBe(false);
  });

  it("writeOwned writes the same line as write, serialised once, the object given away", () => {
    const { logger, lines } = linesAt("info");
    const fields = { time: "t", method: "m", ms: 2 };
    logger.write("info", { ...fields });
    const owned: Record<string, unknown> = { ...fields };
    logger.writeOwned("info", owned);
    logger.writeOwned("error", { level: "debug", a: 1 });
    logger.writeOwned("debug", { dropped: true });
    expect(lines[1]).toBe(lines[0]);
    expect(owned.level).toBe("info");
    expect(JSON.parse(lines[2] as string)).toEqual({ level: "error", a: 1 });
    expect(lines).toHaveLength(3);
  });

  it("an empty object, and one that names a level itself (the line's level wins)", () => {
    const { logger, lines } = linesAt("debug");
    logger.write("warn", {});
    logger.write("error", { level: "info", a: 1 });
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ level: "warn" }, { level: "error", a: 1 }]);
  });

  it("writes only at or above its level", () => {
    const { logger, lines } = linesAt("warn");
    logger.write("info", { n: 1 });
    logger.write("debug", { n: 2 });
    logger.write("warn", { n: 3 });
    logger.write("error", { n: 4 });
    logger.raw("info", "raw info");
    logger.raw("error", "raw error");
    expect(lines).toEqual(['{"n":3,"level":"warn"}', '{"n":4,"level":"error"}', "raw error"]);
  });
});

describe("isoNow", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is the current time as toISOString gives it, millisecond by millisecond", () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse("2026-12-03T04:00:00.123Z"));
    expect(isoNow()).toBe("2026-12-03T04:00:00.123Z");
    expect(isoNow()).toBe("2026-12-03T04:00:00.123Z");
    vi.setSystemTime(Date.parse("2026-12-03T04:00:00.124Z"));
    expect(isoNow()).toBe("2026-12-03T04:00:00.124Z");
    vi.setSystemTime(Date.parse("2027-01-01T00:00:00.000Z"));
    expect(isoNow()).toBe("2027-01-01T00:00:00.000Z");
  });
});
