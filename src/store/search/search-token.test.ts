import { describe, expect, it } from "vitest";
import { expectError } from "../../../test/support/fixtures.js";
import { encodeToken } from "../page-token.js";
import { decodeSearchToken, encodeSearchToken, searchDigest } from "./search-token.js";

const digest = searchDigest([["word"], undefined, "desc", ""]);

describe("search page tokens", () => {
  it("give back the position they were made with", () => {
    const at = { createdMs: 1_700_000_000_123, id: "20260101-000000-abcdef01", seq: 41 };
    expect(decodeSearchToken(encodeSearchToken(digest, at), digest)).toEqual(at);
  });

  it("a token of another search is INVALID_ARGUMENT saying so", () => {
    const token = encodeSearchToken(digest, { createdMs: 1, id: "s1", seq: 1 });
    expectError(
      () => decodeSearchToken(token, searchDigest(["other"])),
      "INVALID_ARGUMENT",
      "different search",
    );
  });

  it("digests ignore the order of object keys but not of arrays", () => {
    expect(searchDigest([{ a: 1, b: { c: 2, d: 3 } }])).toBe(
      searchDigest([{ b: { d: 3, c: 2 }, a: 1 }]),
    );
    expect(searchDigest([["a", "b"]])).not.toBe(searchDigest([["b", "a"]]));
    expect(searchDigest([null])).not.toBe(searchDigest([{}]));
    expect(digest).toMatch(/^[A-Za-z0-9_-]{11}$/);
  });

  it.each([
    ["another kind", ["list", digest, 1, "s1", 1]],
    ["a missing field", ["search", digest, 1, "s1"]],
    ["an extra field", ["search", digest, 1, "s1", 1, 0]],
    ["a digest that is no string", ["search", 7, 1, "s1", 1]],
    ["a fractional time", ["search", digest, 1.5, "s1", 1]],
    ["a time that is no number", ["search", digest, "1", "s1", 1]],
    ["an id that is no session id", ["search", digest, 1, "../x", 1]],
    ["an id that is no string", ["search", digest, 1, 5, 1]],
    ["a negative seq", ["search", digest, 1, "s1", -1]],
    ["a fractional seq", ["search", digest, 1, "s1", 1.5]],
  ])("a token with %s is INVALID_ARGUMENT: pass it unchanged", (_, fields) => {
    expectError(
      () => decodeSearchToken(encodeToken(fields as never), digest),
      "INVALID_ARGUMENT",
      "page_token",
      "unchanged",
    );
  });

  it("seq 0 (a session resumed from its start) is a position", () => {
    expect(decodeSearchToken(encodeToken(["search", digest, 0, "s1", 0]), digest).seq).toBe(0);
  });
});
