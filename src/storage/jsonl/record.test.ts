import { crc32 } from "node:zlib";
import { toJson, toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { forkLikeEntries } from "../conformance-helpers.js";
import { checkFrame, decodePayload, encodeRecord, encodeRecords } from "./record.js";

/** One line per record: a fixed header, a CRC over seq and payload, canonical proto JSON. */
describe("record", () => {
  const entries = forkLikeEntries("20260101-000000-cafebabe");

  function roundTrip(line: string) {
    const buf = Buffer.from(line);
    expect(buf.at(-1)).toBe(0x0a);
    const frame = checkFrame(buf, 0, buf.length - 1);
    if (typeof frame === "string") throw new Error(frame);
    return decodePayload(buf, frame);
  }

  it("round-trips every kind, NUL, U+2028, binary data and uint64 beyond 2^53", () => {
    for (const e of entries) {
      const line = encodeRecord(e);
      expect(line.indexOf("\n")).toBe(line.length - 1);
      JSON.parse(line);
      const back = roundTrip(line);
      expect(typeof back).not.toBe("string");
      expect(toJson(EntrySchema, back as Entry)).toEqual(toJson(EntrySchema, e));
    }
  });

  it("catches a change of any single byte of the line", () => {
    const buf = Buffer.from(encodeRecord(entries[3] as Entry));
    for (let i = 0; i < buf.length - 1; i++) {
      const copy = Buffer.from(buf);
      copy[i] = (copy[i] as number) ^ 0x04;
      const frame = checkFrame(copy, 0, copy.length - 1);
      expect(typeof frame, `byte ${i} (${String.fromCharCode(buf[i] as number)})`).toBe("string");
    }
  });

  it("catches a change of any single byte of a line with the `more` marker", () => {
    const line = encodeRecord(entries[3] as Entry, undefined, true);
    expect(line).toContain(',"more":true,"entry":');
    const buf = Buffer.from(line);
    const frame = checkFrame(buf, 0, buf.length - 1);
    expect(typeof frame !== "string" && frame.more).toBe(true);
    for (let i = 0; i < buf.length - 1; i++) {
      const copy = Buffer.from(buf);
      copy[i] = (copy[i] as number) ^ 0x04;
      const f = checkFrame(copy, 0, copy.length - 1);
      expect(typeof f, `byte ${i} (${String.fromCharCode(buf[i] as number)})`).toBe("string");
    }
  });

  it("encodeRecords marks every record of the write but the last", () => {
    const buf = encodeRecords(entries.slice(0, 4));
    const marks: boolean[] = [];
    for (let pos = 0; pos < buf.length; ) {
      const nl = buf.indexOf(0x0a, pos);
      const frame = checkFrame(buf, pos, nl);
      if (typeof frame === "string") throw new Error(frame);
      marks.push(frame.more);
      pos = nl + 1;
    }
    expect(marks).toEqual([true, true, true, false]);
    const single = encodeRecords(entries.slice(0, 1)).toString();
    expect(single).toBe(encodeRecord(entries[0] as Entry));
  });

  it("refuses header variants a writer never produces", () => {
    const good = encodeRecord(entries[1] as Entry).slice(0, -1);
    const variants = [
      good.replace('{"seq":2,', '{"seq":02,'),
      good.replace('{"seq":2,', '{"seq":2 ,'),
      good.replace('{"seq":2,', '{ "seq":2,'),
      good.replace(/"crc":"([0-9a-f]{8})"/, (_, c: string) => `"crc":"${c.toUpperCase()}"`),
      good.slice(0, -1),
      good.replace('"entry":', '"more":false,"entry":'),
      good.replace('"entry":', '"more": true,"entry":'),
      good.replace('"entry":', '"more":true ,"entry":'),
    ].filter((v) => v !== good);
    expect(variants.length).toBeGreaterThanOrEqual(4);
    for (const v of variants) {
      const buf = Buffer.from(v);
      expect(typeof checkFrame(buf, 0, buf.length), v.slice(0, 40)).toBe("string");
    }
  });

  it("refuses a payload whose seq disagrees with its header, even with a valid CRC", () => {
    const payload = toJsonString(EntrySchema, entries[1] as Entry);
    const crc = crc32(payload, crc32("3")).toString(16).padStart(8, "0");
    const buf = Buffer.from(`{"seq":3,"crc":"${crc}","entry":${payload}}`);
    const frame = checkFrame(buf, 0, buf.length);
    if (typeof frame === "string") throw new Error(frame);
    expect(decodePayload(buf, frame)).toContain("header seq 3 but entry seq 2");
  });
});
