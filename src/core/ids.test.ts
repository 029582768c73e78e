import { describe, expect, it } from "vitest";
import { expectError } from "../../test/support/fixtures.js";
import {
  checkEntryId,
  checkSessionId,
  checkSessionPrefix,
  checkSessionRef,
  checkWorkspace,
  ENTRY_ID_PATTERN,
  matchesSessionRef,
  newEntryId,
  newSessionId,
  quote,
  shortId,
} from "./ids.js";

const HUGE = "a".repeat(10 * 1024);

/** Ids that must never reach a file name. */
const HOSTILE: [string, string][] = [
  ["empty", ""],
  ["traversal", "../etc"],
  ["a bare ..", ".."],
  ["a slash", "abcd/efgh"],
  ["a backslash", "abcd\\efgh"],
  ["an absolute path", "/etc/passwd"],
  ["a NUL byte", "abcd\u0000efgh"],
  ["a space", "abcd efgh"],
];

describe("quote", () => {
  it("shows a value of up to 80 characters whole, as a JSON string", () => {
    const v = "a".repeat(80);
    expect(quote(v)).toBe(`"${v}"`);
    expect(quote('say "hi"')).toBe('"say \\"hi\\""');
  });

  it("cuts a longer value to 80 characters and says how long it was", () => {
    expect(quote("a".repeat(81))).toBe(`"${"a".repeat(80)}…(81 chars)"`);
  });
});

describe("checkSessionId", () => {
  it("accepts generated and client-chosen ids", () => {
    expect(checkSessionId("20260304-050607-0a1b2c3d")).toBe("20260304-050607-0a1b2c3d");
    expect(checkSessionId("a")).toBe("a");
    expect(checkSessionId(`A${"b".repeat(127)}`)).toHaveLength(128);
  });

  it.each([
    ...HOSTILE,
    ["a dot", "abcd.jsonl"],
    ["a leading dot", ".hidden"],
    ["a leading dash", "-rf"],
    ["129 characters", "a".repeat(129)],
  ])("rejects %s with INVALID_ARGUMENT", (_, id) => {
    expectError(() => checkSessionId(id), "INVALID_ARGUMENT", "session id");
  });

  it("rejects a 10 KB id without echoing it whole", () => {
    const err = expectError(() => checkSessionId(HUGE), "INVALID_ARGUMENT");
    expect(err.message.length).toBeLessThan(400);
    expect(err.message).toContain("10240 chars");
  });
});

describe("checkWorkspace", () => {
  it("defaults an empty or missing workspace to 'default'", () => {
    expect(checkWorkspace(undefined)).toBe("default");
    expect(checkWorkspace("")).toBe("default");
  });

  it.each([
    ["null", null],
    ["a number", 42],
    ["an array", ["team-a"]],
  ])("refuses %s from a JavaScript caller as INVALID_ARGUMENT", (_, ws) => {
    // 42 and ["team-a"] pass the pattern as strings, then break path building.
    const err = expectError(() => checkWorkspace(ws as unknown as string), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/^workspace must be a string/);
  });

  it("accepts names with dots, dashes and underscores after the first character", () => {
    expect(checkWorkspace("team-a.prod_1")).toBe("team-a.prod_1");
  });

  it.each([
    ...HOSTILE.filter(([, ws]) => ws !== ""),
    ["a leading dot", ".ws"],
    ["129 characters", "w".repeat(129)],
    ["10 KB", HUGE],
  ])("rejects %s with INVALID_ARGUMENT", (_, ws) => {
    const err = expectError(() => checkWorkspace(ws), "INVALID_ARGUMENT", "workspace");
    expect(err.message.length).toBeLessThan(400);
  });
});

describe("checkSessionRef", () => {
  it("accepts a full id or a prefix", () => {
    expect(checkSessionRef("2026")).toBe("2026");
    expect(checkSessionRef("20260304-050607-0a1b2c3d")).toBe("20260304-050607-0a1b2c3d");
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a number", 20260304],
    ["an object", { id: "abcd" }],
  ])("refuses %s from a JavaScript caller as INVALID_ARGUMENT, not a TypeError later", (_, ref) => {
    // "undefined" and "20260304" pass the id pattern as strings: a non-string must not.
    const err = expectError(() => checkSessionRef(ref as unknown as string), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/^session must be a string/);
  });

  it("refuses an empty reference as missing: 'session is required'", () => {
    const err = expectError(() => checkSessionRef(""), "INVALID_ARGUMENT");
    expect(err.message).toMatch(/^session is required/);
  });

  it.each([...HOSTILE.filter(([, ref]) => ref !== ""), ["a dot", "abcd.x"]])(
    "rejects %s with INVALID_ARGUMENT",
    (_, ref) => {
      expectError(() => checkSessionRef(ref), "INVALID_ARGUMENT", "invalid session");
    },
  );

  it("rejects a 10 KB reference without echoing it whole", () => {
    const err = expectError(() => checkSessionRef(HUGE), "INVALID_ARGUMENT");
    expect(err.message.length).toBeLessThan(400);
  });
});

describe("checkSessionPrefix", () => {
  it("accepts a prefix of at least 4 characters", () => {
    expect(checkSessionPrefix("2026")).toBe("2026");
  });

  it("rejects a prefix shorter than 4 characters with INVALID_ARGUMENT", () => {
    const err = expectError(() => checkSessionPrefix("202"), "INVALID_ARGUMENT", '"202"');
    expect(err.message).toContain("4");
  });
});

describe("shortId", () => {
  it("is the random part of a generated id", () => {
    expect(shortId("20260304-050607-0a1b2c3d")).toBe("0a1b2c3d");
    expect(shortId(newSessionId())).toMatch(/^[0-9a-f]{8}$/);
  });

  it.each([
    ["a client-chosen id", "my-session_1"],
    ["an id that only looks generated (upper-case hex)", "20260304-050607-0A1B2C3D"],
    ["an id with a longer tail", "20260304-050607-0a1b2c3d9"],
    ["an id that ends like a generated one", "x20260304-050607-0a1b2c3d"],
  ])("is %s itself", (_, id) => {
    expect(shortId(id)).toBe(id);
  });
});

describe("matchesSessionRef", () => {
  const id = "20260304-050607-0a1b2c3d";

  it("matches a prefix of the id and a prefix of its random part", () => {
    expect(matchesSessionRef(id, "2026")).toBe(true);
    expect(matchesSessionRef(id, "0a1b")).toBe(true);
    expect(matchesSessionRef(id, "0a1b2c3d")).toBe(true);
  });

  it("does not match the middle of the id, nor the random part of a client-chosen id", () => {
    expect(matchesSessionRef(id, "0506")).toBe(false);
    expect(matchesSessionRef(id, "1b2c")).toBe(false);
    expect(matchesSessionRef("team-0a1b2c3d", "0a1b")).toBe(false);
  });
});

describe("checkEntryId", () => {
  it("accepts [A-Za-z0-9_-]{1,64}", () => {
    expect(checkEntryId("-_aZ09")).toBe("-_aZ09");
    expect(checkEntryId("e".repeat(64))).toHaveLength(64);
  });

  it.each([...HOSTILE, ["65 characters", "e".repeat(65)], ["a dot", "a.b"]])(
    "rejects %s with INVALID_ARGUMENT",
    (_, id) => {
      expectError(() => checkEntryId(id), "INVALID_ARGUMENT", "entry id");
    },
  );
});

describe("newSessionId", () => {
  it("is YYYYMMDD-HHMMSS-<8 hex> of the given instant", () => {
    expect(newSessionId(new Date("2026-03-04T05:06:07.890Z"))).toMatch(
      /^20260304-050607-[0-9a-f]{8}$/,
    );
  });

  it("uses UTC, not the local time zone", () => {
    expect(newSessionId(new Date("2026-12-31T23:30:00-05:00"))).toMatch(
      /^20270101-043000-[0-9a-f]{8}$/,
    );
  });

  it("is a valid session id", () => {
    expect(checkSessionId(newSessionId())).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
  });

  it("sorts by creation time", () => {
    const instants = [
      "2025-12-31T23:59:59Z",
      "2026-01-01T00:00:00Z",
      "2026-01-01T00:00:01Z",
      "2026-01-01T09:59:59Z",
      "2026-01-01T10:00:00Z",
      "2026-10-02T00:00:00Z",
    ];
    const ids = instants.map((iso) => newSessionId(new Date(iso)));
    expect([...ids].reverse().sort()).toEqual(ids);
  });

  it("differs between two sessions created in the same second", () => {
    const now = new Date("2026-03-04T05:06:07Z");
    expect(newSessionId(now)).not.toBe(newSessionId(now));
  });
});

describe("newEntryId", () => {
  it("is a valid entry id and random", () => {
    const a = newEntryId();
    expect(a).toMatch(ENTRY_ID_PATTERN);
    expect(a).not.toBe(newEntryId());
  });

  it("stays 16 random hex characters over more ids than one block of random bytes serves", () => {
    // A block is 4096 bytes, 8 per entry id: 1,500 ids use it up twice whatever was drawn before.
    const ids = Array.from({ length: 1500 }, () => newEntryId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
