import { clone, create, equals } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Entry, EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { entryArb } from "../../test/support/entry-arbitrary.js";
import { copyEntry } from "./append-plan.js";
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
