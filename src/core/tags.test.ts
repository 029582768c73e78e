import { describe, expect, it } from "vitest";
import { SessiondError } from "./errors.js";
import {
  applyTagChanges,
  checkTagSet,
  checkTags,
  foldTags,
  hasTags,
  MAX_TAG_VALUE_BYTES,
  MAX_TAGS,
  MAX_TAGS_BYTES,
} from "./tags.js";

function refusal(f: () => void): SessiondError {
  try {
    f();
  } catch (err) {
    if (err instanceof SessiondError) return err;
    throw err;
  }
  throw new Error("not refused");
}

const many = (n: number, value = "v") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));

describe("checkTags", () => {
  it("takes keys of the pattern and values up to the limit", () => {
    checkTags({ user: "ana", "team/area": "x.y-z_1", R2: "é".repeat(128) }, "tags", false);
    checkTags(many(MAX_TAGS), "tags", false);
  });

  it.each([
    ["", "invalid tag key"],
    ["-x", "invalid tag key"],
    ["a b", "invalid tag key"],
    ["k".repeat(65), "invalid tag key"],
    ["ü", "invalid tag key"],
  ])("refuses the key %j, naming it", (key, message) => {
    const err = refusal(() => checkTags({ [key]: "v" }, "tags", false));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain(message);
    expect(err.message).toContain(JSON.stringify(key));
  });

  it("refuses a value over 256 UTF-8 bytes (counted in bytes, not characters)", () => {
    checkTags({ k: "a".repeat(MAX_TAG_VALUE_BYTES) }, "tags", false);
    const err = refusal(() => checkTags({ k: "é".repeat(129) }, "tags", false));
    expect(err.message).toContain("258 bytes");
    expect(err.message).toContain('"k"');
  });

  it("refuses more than 32 tags, in a set and in one change", () => {
    expect(refusal(() => checkTags(many(MAX_TAGS + 1), "tags", false)).message).toContain(
      "33 tags",
    );
    expect(refusal(() => checkTags(many(MAX_TAGS + 1, ""), "x", true)).message).toContain(
      "33 tags",
    );
  });

  it("an empty value: refused on a root, a removal in changes", () => {
    expect(refusal(() => checkTags({ k: "" }, "tags", false)).message).toContain(
      'tag "k" has an empty value',
    );
    checkTags({ k: "" }, "tags", true);
  });

  it("refuses a set over 4 KiB in all, but not changes alone", () => {
    const big = Object.fromEntries(
      Array.from({ length: 17 }, (_, i) => [`k${i}`, "v".repeat(240)]),
    );
    expect(refusal(() => checkTags(big, "tags", false)).message).toContain(
      `at most ${MAX_TAGS_BYTES}`,
    );
    checkTags(big, "tags", true);
    expect(refusal(() => checkTagSet(big, "who")).message).toMatch(/^who: /);
  });

  it("a set of exactly 4 KiB is allowed", () => {
    // 16 tags of key "kNN" (3 bytes) and 253-byte values: 16 × 256 = 4096.
    const exact = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`k${String(i).padStart(2, "0")}`, "v".repeat(253)]),
    );
    checkTagSet(exact, "tags");
    expect(() => checkTagSet({ ...exact, x: "y" }, "tags")).toThrow(/4098 bytes/);
  });
});

describe("applyTagChanges and foldTags", () => {
  it("sets, replaces and removes keys; leaves the input alone", () => {
    const current = { a: "1", b: "2" };
    const next = applyTagChanges(current, { b: "3", c: "4", a: "" });
    expect(next).toEqual({ b: "3", c: "4" });
    expect(current).toEqual({ a: "1", b: "2" });
  });

  it("no changes: the same set", () => {
    const current = { a: "1" };
    expect(applyTagChanges(current, {})).toBe(current);
  });

  it("folds maps in order: the root's, then each change", () => {
    expect(foldTags([{ a: "1", b: "2" }, { a: "" }, { a: "5", c: "3" }, { c: "" }])).toEqual({
      a: "5",
      b: "2",
    });
    expect(foldTags([])).toEqual({});
    expect(foldTags([{ a: "1" }, { a: "" }])).toEqual({});
  });
});

describe("hasTags", () => {
  it("every wanted pair must be there with the same value", () => {
    const tags = { user: "ana", repo: "x" };
    expect(hasTags(tags, {})).toBe(true);
    expect(hasTags(tags, { user: "ana" })).toBe(true);
    expect(hasTags(tags, { user: "ana", repo: "x" })).toBe(true);
    expect(hasTags(tags, { user: "bob" })).toBe(false);
    expect(hasTags(tags, { user: "ana", team: "t" })).toBe(false);
    expect(hasTags({}, { user: "" })).toBe(false);
  });
});
