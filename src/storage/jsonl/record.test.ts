import { crc32 } from "node:zlib";
import { toJson, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { entryArb } from "../../../test/support/entry-arbitrary.js";
import { forkLikeEntries } from "../../../test/support/fixtures.js";
import { newMeta } from "./entry-meta.js";
import { checkFrame, decodePayload, encodeRecord, encodeRecords, readMeta } from "./record.js";

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

  it("encodeRecords writes the bytes of encodeRecord's lines, for any entries and payloads", () => {
    fc.assert(
      fc.property(fc.array(entryArb, { minLength: 1, maxLength: 4 }), fc.boolean(), (es, given) => {
        es.forEach((e, i) => {
          e.seq = BigInt(i + 1);
        });
        // With the planner's payloads (given) or without (encoded here).
        const payloads = given ? es.map((e) => toJsonString(EntrySchema, e)) : [];
        const lines = es.map((e, i) => encodeRecord(e, payloads[i], i < es.length - 1));
        expect(encodeRecords(es, payloads).equals(Buffer.from(lines.join("")))).toBe(true);
      }),
      { numRuns: 300 },
    );
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

/** A record line (no newline) around any seq text and payload, with a checksum over exactly those bytes. */
function framed(seqText: string, payload: string, more = false): Buffer {
  const crc = crc32(payload, crc32(more ? `${seqText}+` : seqText))
    .toString(16)
    .padStart(8, "0");
  const marker = more ? '"more":true,' : "";
  return Buffer.from(`{"seq":${seqText},"crc":"${crc}",${marker}"entry":${payload}}`);
}

function reasonOf(buf: Buffer, start = 0, end = buf.length): string {
  const frame = checkFrame(buf, start, end);
  return typeof frame === "string" ? frame : "intact";
}

/**
 * What the frame check says about a line that is not intact: the reason
 * ends up in the torn-tail verdict and in DATA_LOSS messages, so it names
 * the first part of the line that is wrong or missing.
 */
describe("a damaged record line", () => {
  const entry = forkLikeEntries("20260101-000000-cafebabe")[3] as Entry;

  /** The reason for the first `cut` bytes of `line`, by the part the cut falls in. */
  function expectedForCut(line: string, cut: number): string {
    const crcAt = line.indexOf(',"crc":"') + ',"crc":"'.length;
    const payloadAt = line.indexOf('"entry":') + '"entry":'.length;
    if (cut < '{"seq":'.length) return "not a record (bad header)";
    if (cut === '{"seq":'.length) return "bad seq in header";
    if (cut < crcAt) return "bad header after seq";
    if (cut < crcAt + 8) return "bad checksum field";
    if (cut < payloadAt) return "bad header after checksum";
    if (cut === line.length) return "intact";
    if (cut - payloadAt < 2 || line[cut - 1] !== "}") return "record is not closed";
    return "checksum mismatch";
  }

  for (const more of [false, true]) {
    it(`a record${more ? " with the more marker" : ""} cut anywhere is named by the first part that is missing`, () => {
      const line = encodeRecord(entry, undefined, more).slice(0, -1);
      for (let cut = 0; cut <= line.length; cut++) {
        const alone = Buffer.from(line.slice(0, cut));
        expect(reasonOf(alone), `cut at ${cut}: ${line.slice(0, cut)}`).toBe(
          expectedForCut(line, cut),
        );
      }
    });
  }

  it("the verdict on buf[start, end) does not depend on the bytes around it", () => {
    const line = Buffer.from(encodeRecord(entry, undefined, true));
    const around = Buffer.concat([line, line]);
    const start = line.length;
    for (let cut = 0; cut < line.length; cut++) {
      const alone = Buffer.from(line.subarray(0, cut));
      expect(reasonOf(around, start, start + cut), `cut at ${cut}`).toBe(reasonOf(alone));
    }
  });

  it("a seq of more than 16 digits is refused even with a checksum over all of them", () => {
    expect(reasonOf(framed("1234567890123456", "{}"))).toBe("intact");
    expect(reasonOf(framed("12345678901234567", "{}"))).toBe("bad header after seq");
  });

  it("a seq with a character above '9' in it is refused even with a checksum over it", () => {
    expect(reasonOf(framed("2a", "{}"))).toBe("bad header after seq");
    expect(reasonOf(framed("2:", "{}"))).toBe("bad header after seq");
  });

  it("a seq with a leading zero, or no seq, is refused even with a checksum over its digits", () => {
    expect(reasonOf(framed("02", "{}"))).toBe("bad seq in header");
    expect(reasonOf(framed("0", "{}"))).toBe("bad seq in header");
    expect(reasonOf(framed("", "{}"))).toBe("bad seq in header");
  });

  it("a checksum field with any byte but 0-9 and a-f in it is a bad checksum field", () => {
    const good = framed("7", "{}");
    const crcAt = good.indexOf(',"crc":"') + ',"crc":"'.length;
    const hex = new Set(Buffer.from("0123456789abcdef"));
    for (let byte = 0; byte < 256; byte++) {
      if (hex.has(byte)) continue;
      for (const i of [0, 7]) {
        const copy = Buffer.from(good);
        copy[crcAt + i] = byte;
        expect(reasonOf(copy), `byte ${byte} at ${i}`).toBe("bad checksum field");
      }
    }
  });

  it("every hex digit of a checksum is read at its value", () => {
    const seen = new Set<string>();
    for (let seq = 1; seq <= 200; seq++) {
      const buf = framed(String(seq), `{"n":${seq}}`);
      const crcAt = buf.indexOf(',"crc":"') + ',"crc":"'.length;
      const crc = buf.toString("latin1", crcAt, crcAt + 8);
      for (const c of crc) seen.add(c);
      expect(reasonOf(buf), crc).toBe("intact");
    }
    expect([...seen].sort().join("")).toBe("0123456789abcdef");
  });

  it("a record with an empty payload is not closed, even with a checksum over its seq", () => {
    expect(reasonOf(framed("1", ""))).toBe("record is not closed");
  });

  it("a one-byte payload is framed, and the decoder refuses it as an entry", () => {
    const buf = framed("1", "5");
    const frame = checkFrame(buf, 0, buf.length);
    if (typeof frame === "string") throw new Error(frame);
    expect(buf.toString("utf8", frame.start, frame.end)).toBe("5");
    expect(decodePayload(buf, frame)).toMatch(/^payload is not a valid entry \(/);
  });

  it("the decoder's error is quoted up to 120 characters", () => {
    const payload = JSON.stringify({
      id: "m3",
      parentId: "m2",
      seq: "3",
      message: { role: "ROLE_ASSISTANT", usage: { inputTokens: "x".repeat(300) } },
    });
    const buf = framed("3", payload);
    const frame = checkFrame(buf, 0, buf.length);
    if (typeof frame === "string") throw new Error(frame);
    const reason = decodePayload(buf, frame);
    expect(reason).toMatch(/^payload is not a valid entry \(cannot decode field .*x\)$/);
    expect(reason).toHaveLength("payload is not a valid entry ()".length + 120);
  });
});

/** The indexed fields of a payload (readMeta), by the fast scan or else by JSON.parse. */
describe("reading a record's indexed fields", () => {
  const boundsOf = (buf: Buffer) => {
    const frame = checkFrame(buf, 0, buf.length);
    if (typeof frame === "string") throw new Error(frame);
    return frame;
  };
  const m3 = { id: "m3", parentId: "m2", seq: "3", message: { role: "ROLE_USER", content: [] } };

  it("a payload the scan does not read that is not JSON is not a valid entry", () => {
    const buf = framed("3", ' {"id":"m3",');
    expect(readMeta(buf, boundsOf(buf), newMeta())).toMatch(/^payload is not a valid entry \(/);
  });

  it("a payload in the writer's layout whose seq is not the header's names both", () => {
    const buf = framed("4", JSON.stringify(m3));
    expect(readMeta(buf, boundsOf(buf), newMeta())).toBe("header seq 4 but entry seq 3");
  });

  it("a payload in another key order whose seq is not the header's names both", () => {
    const { seq, ...rest } = m3;
    const buf = framed("4", JSON.stringify({ seq, ...rest }));
    expect(readMeta(buf, boundsOf(buf), newMeta())).toBe("header seq 4 but entry seq 3");
  });

  it("a payload in another key order is read like the writer's layout", () => {
    const { seq, ...rest } = m3;
    const buf = framed("3", JSON.stringify({ seq, ...rest }));
    const meta = newMeta();
    expect(readMeta(buf, boundsOf(buf), meta)).toBeUndefined();
    expect(meta).toMatchObject({ id: "m3", parentId: "m2", seq: 3 });
  });
});
