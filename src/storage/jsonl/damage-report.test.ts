import { crc32 } from "node:zlib";
import { toJsonString } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { rootEntry, user } from "../../../test/support/fixtures.js";
import { isSessiondError } from "../../core/errors.js";
import { SessionLog } from "../../core/session-log.js";
import { scan } from "./reader.js";
import { encodeRecord } from "./record.js";

/**
 * What a scan reports about damage, beyond its kind: the line, the file
 * offset and a reason an operator can act on, for bytes scanned after
 * records already in the log (`base` > 0, as when a reader catches up with
 * another process's appends). The reasons land in fsck output, in the
 * saved torn tails' log lines and in DATA_LOSS messages.
 */

const SESSION = "20260101-000000-d4a4a6e5";
/** Records 1 and 2, already scanned into the log. */
const PREFIX = Buffer.from(
  encodeRecord(rootEntry(SESSION, { id: "m1" })) +
    encodeRecord(user("m2", "text of m2", { parentId: "m1", seq: 2 })),
);
const BASE = PREFIX.length;

interface RecordOptions {
  /** Not the last record of its write. */
  more?: boolean;
  /** A payload that passes the scan but does not decode (a bad timestamp). */
  undecodable?: boolean;
}

/** The line of message m<seq>, a child of m<seq - 1>, with a valid checksum. */
function line(seq: number, o: RecordOptions = {}): string {
  const entry = user(`m${seq}`, `text of m${seq}`, { parentId: `m${seq - 1}`, seq });
  let payload = toJsonString(EntrySchema, entry);
  if (o.undecodable === true) payload = `${payload.slice(0, -1)},"timestamp":"not a time"}`;
  const crc = crc32(payload, crc32(o.more === true ? `${seq}+` : String(seq)))
    .toString(16)
    .padStart(8, "0");
  const marker = o.more === true ? '"more":true,' : "";
  return `{"seq":${seq},"crc":"${crc}",${marker}"entry":${payload}}\n`;
}

const bytes = (...parts: string[]) => Buffer.from(parts.join(""));
const len = (...parts: string[]) => Buffer.byteLength(parts.join(""));

describe("a scan's report of damage", () => {
  let log: SessionLog;

  beforeEach(() => {
    log = new SessionLog(SESSION);
    expect(scan(PREFIX, 0, log).verdict).toEqual({ kind: "ok" });
  });

  it("a last line without its newline is a torn tail named as such", () => {
    const cut = line(4).slice(0, -1);
    const r = scan(bytes(line(3), cut), BASE, log);
    const offset = BASE + len(line(3));
    expect(r).toEqual({
      end: offset,
      verdict: { kind: "torn", line: 4, offset, reason: "incomplete last line (no newline)" },
    });
    expect(log.headSeq).toBe(3);
  });

  it("a first line without its newline is a torn tail named as such", () => {
    const r = scan(Buffer.from(line(1).slice(0, -1)), 0, new SessionLog(SESSION));
    expect(r.verdict).toEqual({
      kind: "torn",
      line: 1,
      offset: 0,
      reason: "incomplete last line (no newline)",
    });
  });

  it("a whole garbage line after intact records, with nothing intact after it, is a torn tail", () => {
    const r = scan(bytes(line(3), "garbage\n"), BASE, log);
    const offset = BASE + len(line(3));
    expect(r).toEqual({
      end: offset,
      verdict: { kind: "torn", line: 4, offset, reason: "not a record (bad header)" },
    });
  });

  it("an empty line at the end is a torn tail with a bad header", () => {
    const r = scan(Buffer.from("\n"), BASE, log);
    expect(r.verdict).toEqual({
      kind: "torn",
      line: 3,
      offset: BASE,
      reason: "not a record (bad header)",
    });
  });

  it("an empty line followed by an intact record is corruption naming the record's byte", () => {
    const r = scan(bytes("\n", line(3)), BASE, log);
    expect(r).toEqual({
      end: BASE,
      verdict: {
        kind: "corrupt",
        line: 3,
        offset: BASE,
        reason: `not a record (bad header), followed by an intact record at byte ${BASE + 1}`,
      },
    });
  });

  it("a garbage line followed by an intact one is corruption naming both", () => {
    const r = scan(bytes(line(3), "garbage\n", line(4)), BASE, log);
    const offset = BASE + len(line(3));
    expect(r.verdict).toEqual({
      kind: "corrupt",
      line: 4,
      offset,
      reason: `not a record (bad header), followed by an intact record at byte ${offset + 8}`,
    });
  });

  it("a write cut after its first whole records: the reason counts them and names the cut line", () => {
    const cut = line(5).slice(0, 20);
    const r = scan(bytes(line(3, { more: true }), line(4, { more: true }), cut), BASE, log);
    expect(r).toEqual({
      end: BASE,
      verdict: {
        kind: "torn",
        line: 3,
        offset: BASE,
        reason:
          "incomplete write: 2 whole record(s), then line 5: incomplete last line (no newline), before the write's last record",
      },
    });
    expect(log.headSeq).toBe(2);
  });

  it("a write whose last record never came: the reason says the file ends", () => {
    const r = scan(bytes(line(3), line(4, { more: true })), BASE, log);
    const offset = BASE + len(line(3));
    expect(r).toEqual({
      end: offset,
      verdict: {
        kind: "torn",
        line: 4,
        offset,
        reason:
          "incomplete write: 1 whole record(s), then the file ends, before the write's last record",
      },
    });
    expect(log.headSeq).toBe(3);
    expect(log.last?.id).toBe("m3");
  });

  it("a last record that does not decode is corruption at its line, with the decoder's reason", () => {
    const r = scan(bytes(line(3), line(4, { undecodable: true })), BASE, log);
    const offset = BASE + len(line(3));
    expect(r.end).toBe(offset);
    expect(r.verdict).toMatchObject({ kind: "corrupt", line: 4, offset });
    expect(r.verdict.kind === "corrupt" && r.verdict.reason).toMatch(
      /^payload is not a valid entry \(cannot decode .*Timestamp/,
    );
  });

  it("a record read lazily that does not decode at first use is DATA_LOSS naming the session, its line and byte", () => {
    const r = scan(bytes(line(3), line(4, { undecodable: true }), line(5)), BASE, log);
    expect(r.verdict).toEqual({ kind: "ok" });
    expect(log.at(3)?.id).toBe("m3");
    const err = (() => {
      try {
        log.at(4);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isSessiondError(err, "DATA_LOSS"), String(err)).toBe(true);
    const at = `session "${SESSION}" is corrupt at line 4 (byte ${BASE + len(line(3))}): `;
    expect((err as Error).message).toMatch(
      new RegExp(`^${at.replace(/[()]/g, "\\$&")}payload is not a valid entry \\(`),
    );
  });

  it("the last whole write before a torn one is decoded again: if it does not decode, it is corruption at its line", () => {
    const damaged = bytes(line(3), line(4, { undecodable: true }), line(5, { more: true }));
    const r = scan(damaged, BASE, log);
    const offset = BASE + len(line(3));
    expect(r.end).toBe(offset);
    expect(r.verdict).toMatchObject({ kind: "corrupt", line: 4, offset });
    expect(r.verdict.kind === "corrupt" && r.verdict.reason).toMatch(
      /^payload is not a valid entry \(/,
    );
  });
});
