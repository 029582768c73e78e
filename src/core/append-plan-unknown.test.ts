import { toJsonString } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { buildLog, CLOCK, info, ts, user } from "../../test/support/fixtures.js";
import { copyEntry, planAppend } from "./append-plan.js";
import { isSessiondError } from "./errors.js";
import { planWithhold, withheldMarker } from "./withheld.js";

/** Unknown fields as a newer client's entry decoded by fromBinary carries them. */
const UNKNOWN = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];

/** A user message carrying UNKNOWN at its top level. */
function withUnknown(id: string): Entry {
  const e = user(id, "hi");
  e.$unknown = UNKNOWN.map((u) => ({ ...u }));
  return e;
}

describe("copyEntry: which path copies an entry", () => {
  it("an entry with unknown fields is cloned, unknown fields kept, and its kind's JSON not handed back", () => {
    const kinds: (string | undefined)[] = [];
    const copy = copyEntry(withUnknown("u9"), 1, kinds);
    expect(copy.$unknown).toEqual(UNKNOWN);
    expect(kinds[1]).toBeUndefined();
  });

  it("an entry without is its JSON read back, and kinds[i] is that JSON's kind", () => {
    const kinds: (string | undefined)[] = [];
    const copy = copyEntry(user("u9", "a text"), 2, kinds);
    expect(copy.$unknown).toBeUndefined();
    const kind = kinds[2] as string;
    expect(kind).toContain("a text");
    // The copy's own JSON ends with that kind (an entry's JSON: its head, then its kind).
    expect(toJsonString(EntrySchema, copy).endsWith(`${kind}}`)).toBe(true);
  });
});

describe("copyEntry: lone surrogates", () => {
  it("only a whole escape (four hex digits) sends an entry to clone: a text that merely looks like one is read back", () => {
    // Typed backslashes, escaped in the JSON as \\: not a surrogate.
    for (const text of ["\\ud8ag", "\\ud8a", "\\udc0-"]) {
      const kinds: (string | undefined)[] = [];
      copyEntry(user("u9", text), 0, kinds);
      expect(kinds[0], JSON.stringify(text)).toBeDefined();
    }
  });
});

describe("planAppend of entries handed over (decoded by the server)", () => {
  it("keeps an entry's unknown fields in the planned entry", () => {
    const log = buildLog(user("u1", "hi"));
    const p = planAppend(
      log,
      { entries: [withUnknown("u2")], handOver: true },
      { now: () => CLOCK },
    );
    expect(p.write[0]?.$unknown).toEqual(UNKNOWN);
    const plain = planAppend(log, { entries: [user("u3")], handOver: true }, { now: () => CLOCK });
    expect(plain.write[0]?.$unknown).toBeUndefined();
  });
});

describe("a retry against a redacted entry", () => {
  it("of another kind, one that cannot be withheld, is ALREADY_EXISTS (not the redaction's refusal)", () => {
    const log = buildLog(user("u1", "SECRET"));
    const mark = withheldMarker(WithheldReason.REDACTED, "alice", ts(1_700_000_000, 0), "secret");
    log.replaceAll(planWithhold((id) => log.get(id), "s1", ["u1"], mark).changed);
    let error: unknown;
    try {
      planAppend(log, { entries: [info("u1", "a title")] }, { now: () => CLOCK });
    } catch (err) {
      error = err;
    }
    expect(isSessiondError(error, "ALREADY_EXISTS")).toBe(true);
    expect((error as Error).message).toMatch(/"u1" already exists .* with other content/);
  });

  it("of the same message is deduplicated", () => {
    const log = buildLog(user("u1", "SECRET"));
    const mark = withheldMarker(WithheldReason.REDACTED, "alice", ts(1_700_000_000, 0), "secret");
    log.replaceAll(planWithhold((id) => log.get(id), "s1", ["u1"], mark).changed);
    const p = planAppend(log, { entries: [user("u1", "SECRET")] }, { now: () => CLOCK });
    expect(p.deduplicated).toBe(true);
    expect(p.entries[0]?.withheld).toEqual(mark);
  });
});
