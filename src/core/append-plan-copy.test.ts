import { clone, create, equals, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { entryArb } from "../../test/support/entry-arbitrary.js";
import { buildLog, CLOCK, info, user } from "../../test/support/fixtures.js";
import { copyEntry, planAppend } from "./append-plan.js";
import { isSessiondError } from "./errors.js";

/**
 * An embedded caller's entries are copied before planning (the store must
 * not keep the caller's objects): the copy is the entry's stored form read
 * back, which must equal protobuf-es's clone, share nothing with the input,
 * and refuse what clone refuses, as clone does.
 */
describe("copyEntry", () => {
  it("equals protobuf-es's clone and shares no object with the input, for entries of every kind", () => {
    fc.assert(
      fc.property(entryArb, (e) => {
        let cloned: Entry | string;
        try {
          cloned = clone(EntrySchema, e);
        } catch (err) {
          cloned = `entries[0] is no valid entry: ${(err as Error).message}`;
        }
        let copy: Entry;
        try {
          copy = copyEntry(e, 0);
        } catch (err) {
          // Refused as clone refuses it, with its words.
          expect((err as Error).message).toBe(cloned);
          return;
        }
        expect(typeof cloned).not.toBe("string");
        expect(equals(EntrySchema, copy, cloned as Entry)).toBe(true);
        const inputs = new Set<object>();
        JSON.stringify(e, (_, v) => {
          if (typeof v === "object" && v !== null) inputs.add(v);
          return typeof v === "bigint" ? String(v) : v;
        });
        JSON.stringify(copy, (_, v) => {
          if (typeof v === "object" && v !== null) expect(inputs.has(v)).toBe(false);
          return typeof v === "bigint" ? String(v) : v;
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("a lone surrogate, in a text or a Struct key, is refused as clone refuses it", () => {
    const text = create(EntrySchema, {
      kind: {
        case: "message",
        value: { role: Role.USER, content: [{ part: { case: "text", value: "a\ud800b" } }] },
      },
    });
    const key = create(EntrySchema, {
      kind: { case: "custom", value: { namespace: "n", data: { "\udc00": 1 } } },
    });
    for (const e of [text, key]) {
      let error: unknown;
      try {
        copyEntry(e, 3);
      } catch (err) {
        error = err;
      }
      expect(isSessiondError(error, "INVALID_ARGUMENT")).toBe(true);
      expect((error as Error).message).toMatch(/^entries\[3\] is no valid entry: .*invalid UTF8/);
    }
  });
});

describe("planAppend of an embedded caller's entries (copied)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("writes the kind of an entry once: the copy's JSON and the stored JSON share it", () => {
    const text = "a long message text ".repeat(40);
    const log = buildLog(user("u1", "hi"));
    const stringify = vi.spyOn(JSON, "stringify");
    const p = planAppend(log, { entries: [user("", text)] }, { now: () => CLOCK });
    const withText = stringify.mock.results.filter(
      (r) => typeof r.value === "string" && (r.value as string).includes(text),
    );
    stringify.mockRestore();
    expect(withText).toHaveLength(1);
    expect(p.json?.[0]).toBe(toJsonString(EntrySchema, p.write[0] as Entry));
  });

  it("stores the canonical JSON of the planned entries, for entries of every kind and head", () => {
    let planned = 0;
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (given, keepHeads) => {
          const log = buildLog(user("u1", "hi"));
          // Fresh ids (or none), the parent left to planning or the log's entry.
          const entries = given.map((e, i) =>
            create(EntrySchema, {
              ...e,
              id: keepHeads ? `g${i}` : "",
              parentId: keepHeads && i === 0 ? "u1" : undefined,
              timestamp: keepHeads ? e.timestamp : undefined,
            }),
          );
          let p: ReturnType<typeof planAppend>;
          try {
            p = planAppend(log, { entries }, { now: () => CLOCK });
          } catch {
            return; // refused (shape, tree rules): nothing stored
          }
          planned++;
          p.write.forEach((e, i) => {
            expect(p.json?.[i]).toBe(toJsonString(EntrySchema, e));
          });
        },
      ),
      { numRuns: 1000 },
    );
    expect(planned).toBeGreaterThan(100);
  });

  it("writes a SessionInfo anew, with the session id planning sets", () => {
    const log = buildLog(user("u1", "hi"));
    const update = info("i2", "renamed");
    if (update.kind.case === "sessionInfo") update.kind.value.sessionId = "someone-else";
    const p = planAppend(log, { entries: [update] }, { now: () => CLOCK });
    expect(p.json?.[0]).toBe(toJsonString(EntrySchema, p.write[0] as Entry));
    expect(p.json?.[0]).toContain('"sessionId":"s1"');
  });
});
