import { describe, expect, it } from "vitest";
import { expectError } from "../../test/support/fixtures.js";
import { decodePageToken, decodeToken, encodePageToken, encodeToken } from "./page-token.js";

/** A token of arbitrary JSON, as a client forging one would write it. */
const tokenOf = (json: string) => Buffer.from(json).toString("base64url");

const BAD = "invalid page_token: pass next_page_token unchanged";

describe("decodeToken", () => {
  it("gives back the fields a token was encoded from", () => {
    expect(decodeToken(encodeToken([7, "id", ""]))).toEqual([7, "id", ""]);
  });

  it("accepts a token of exactly 2048 characters", () => {
    // 1536 bytes of JSON are 2048 base64url characters.
    const token = tokenOf(`["${"x".repeat(1532)}"]`);
    expect(token).toHaveLength(2048);
    expect(decodeToken(token)).toEqual(["x".repeat(1532)]);
  });

  it("refuses a token longer than 2048 characters with INVALID_ARGUMENT, though it decodes", () => {
    const token = tokenOf(`["${"x".repeat(1535)}"]`);
    expect(token.length).toBeGreaterThan(2048);
    expectError(() => decodeToken(token), "INVALID_ARGUMENT", BAD);
  });

  it.each([
    ["padding", `${tokenOf("[1]")}==`],
    ["a leading character outside base64url", `!${tokenOf("[1]")}`],
    ["a trailing character outside base64url", `${tokenOf("[1]")}!`],
    ["a character of standard base64", `${tokenOf("[1]")}+`],
  ])("refuses a token with %s, though the rest decodes", (_, token) => {
    expect(Buffer.from(token, "base64url").toString()).toBe("[1]");
    expectError(() => decodeToken(token), "INVALID_ARGUMENT", BAD);
  });

  it.each([
    ["not JSON", tokenOf("[1,")],
    ["a JSON object shaped like an array", tokenOf('{"length":4,"0":1,"1":"a","2":"desc","3":""}')],
    ["a JSON string", tokenOf('"abcd"')],
  ])("refuses a token of %s with INVALID_ARGUMENT", (_, token) => {
    expectError(() => decodeToken(token), "INVALID_ARGUMENT", BAD);
  });
});

describe("decodePageToken", () => {
  it("gives back the listing key a token was issued for", () => {
    const key = { createdMs: 1700000000000, id: "s-1", order: "asc", parent: "p" } as const;
    expect(decodePageToken(encodePageToken(key))).toEqual({
      ...key,
      sortBy: "created",
      filter: "",
    });
    for (const more of [
      { sortBy: "updated", filter: "" },
      { sortBy: "created", filter: '["x"]' },
      { sortBy: "updated", filter: '["x"]' },
    ] as const) {
      expect(decodePageToken(encodePageToken({ ...key, ...more }))).toEqual({ ...key, ...more });
    }
  });

  it("an unfiltered listing by creation keeps the four-field form (tokens issued before filters)", () => {
    const token = encodePageToken({ createdMs: 5, id: "a", order: "desc", parent: "" });
    expect(token).toBe(tokenOf(JSON.stringify([5, "a", "desc", ""])));
    expect(
      encodePageToken({ createdMs: 5, id: "a", order: "desc", parent: "", sortBy: "updated" }),
    ).toBe(tokenOf(JSON.stringify([5, "a", "desc", "", "updated", ""])));
  });

  it.each([
    ["three fields", [1, "s-1", "desc"]],
    ["five fields", [1, "s-1", "desc", "", ""]],
    ["seven fields", [1, "s-1", "desc", "", "created", "", ""]],
    ["an unknown order-by", [1, "s-1", "desc", "", "title", ""]],
    ["a filter that is not a string", [1, "s-1", "desc", "", "updated", 0]],
    ["a creation time that is not a number", ["1", "s-1", "desc", ""]],
    ["an id that is not a string", [1, 2, "desc", ""]],
    ["an unknown order", [1, "s-1", "sideways", ""]],
    ["a parent that is not a string", [1, "s-1", "asc", 0]],
  ])("refuses a token with %s with INVALID_ARGUMENT", (_, fields) => {
    const token = tokenOf(JSON.stringify(fields));
    expectError(() => decodePageToken(token), "INVALID_ARGUMENT", BAD);
  });
});
