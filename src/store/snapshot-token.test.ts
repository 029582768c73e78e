import { describe, expect, it } from "vitest";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { expectError } from "../../test/support/fixtures.js";
import { encodeToken, type TokenField } from "./page-token.js";
import {
  decodeStateToken,
  decodeTreeToken,
  encodeStateToken,
  encodeTreeToken,
} from "./snapshot-token.js";

const KEY = { workspace: "ws", sessionId: "s-1" } as const;
const BAD = "invalid page_token: pass next_page_token unchanged";
const OTHER = "invalid page_token: it was issued for another session";

/** A tree token with its fields as a forger would write them (the valid shape by default). */
const treeFields = (over: Partial<Record<number, unknown>> = {}): unknown[] => {
  const f: unknown[] = ["tree", "ws", "s-1", 12, "u5", 3];
  for (const [i, v] of Object.entries(over)) f[Number(i)] = v;
  return f;
};
const stateFields = (over: Partial<Record<number, unknown>> = {}): unknown[] => {
  const f: unknown[] = ["state", "ws", "s-1", 12, "u5", "a1", View.CONTEXT, 4];
  for (const [i, v] of Object.entries(over)) f[Number(i)] = v;
  return f;
};
const tokenOf = (fields: unknown[]) => encodeToken(fields as TokenField[]);

describe("tree page tokens", () => {
  it("give back the snapshot and cursor they were issued with", () => {
    const c = { headSeq: 12, leafId: "u5", afterSeq: 3 };
    expect(decodeTreeToken(KEY, encodeTreeToken(KEY, c))).toEqual(c);
  });

  it("may continue after seq 0 (the page before held nothing but the start)", () => {
    const c = { headSeq: 1, leafId: "r", afterSeq: 0 };
    expect(decodeTreeToken(KEY, encodeTreeToken(KEY, c))).toEqual(c);
  });

  it("continue up to the entry before the snapshot's head", () => {
    const c = { headSeq: 12, leafId: "u5", afterSeq: 11 };
    expect(decodeTreeToken(KEY, encodeTreeToken(KEY, c))).toEqual(c);
  });

  it.each([
    ["five fields", treeFields().slice(0, 5)],
    ["seven fields", [...treeFields(), 0]],
    ["the tag of a state token", treeFields({ 0: "state" })],
    ["a head seq that is not a number", treeFields({ 3: "12" })],
    ["a negative head seq", treeFields({ 3: -1 })],
    ["a fractional head seq", treeFields({ 3: 12.5 })],
    ["a head seq past the safe integers", treeFields({ 3: 2 ** 53 })],
    ["a leaf id that is not a string", treeFields({ 4: 5 })],
    ["an empty leaf id", treeFields({ 4: "" })],
    ["a cursor that is not a number", treeFields({ 5: "3" })],
    ["a negative cursor", treeFields({ 5: -1 })],
    ["a cursor at the snapshot's head (nothing left to read)", treeFields({ 5: 12 })],
    ["a cursor past the snapshot's head", treeFields({ 5: 13 })],
  ])("refuse a token with %s with INVALID_ARGUMENT", (_, fields) => {
    expectError(() => decodeTreeToken(KEY, tokenOf(fields)), "INVALID_ARGUMENT", BAD);
  });

  it.each([
    ["another workspace", { workspace: "other", sessionId: "s-1" }],
    ["another session of the same workspace", { workspace: "ws", sessionId: "s-2" }],
  ])("refuse a token issued for %s, saying so", (_, key) => {
    const token = encodeTreeToken(KEY, { headSeq: 12, leafId: "u5", afterSeq: 3 });
    expectError(() => decodeTreeToken(key, token), "INVALID_ARGUMENT", OTHER);
  });

  it("refuse a token that is not a page token at all", () => {
    expectError(() => decodeTreeToken(KEY, "!"), "INVALID_ARGUMENT", BAD);
  });
});

describe("state page tokens", () => {
  it.each<[string, View.CONTEXT | View.HISTORY]>([
    ["the context view", View.CONTEXT],
    ["the history view", View.HISTORY],
  ])("give back the snapshot and cursor of %s", (_, view) => {
    const c = { headSeq: 12, leafId: "u5", at: "a1", view, offset: 4 } as const;
    expect(decodeStateToken(KEY, encodeStateToken(KEY, c))).toEqual(c);
  });

  it("carry a snapshot at head seq 0", () => {
    const c = { headSeq: 0, leafId: "u5", at: "a1", view: View.HISTORY, offset: 1 } as const;
    expect(decodeStateToken(KEY, encodeStateToken(KEY, c))).toEqual(c);
  });

  it.each([
    ["seven fields", stateFields().slice(0, 7)],
    ["nine fields", [...stateFields(), 0]],
    ["the tag of a tree token", stateFields({ 0: "tree" })],
    ["a head seq that is not a number", stateFields({ 3: "12" })],
    ["a negative head seq", stateFields({ 3: -1 })],
    ["a leaf id that is not a string", stateFields({ 4: 5 })],
    ["an empty leaf id", stateFields({ 4: "" })],
    ["a target entry that is not a string", stateFields({ 5: 1 })],
    ["an empty target entry", stateFields({ 5: "" })],
    ["an unspecified view", stateFields({ 6: View.UNSPECIFIED })],
    ["an unknown view", stateFields({ 6: 3 })],
    ["a view given by name", stateFields({ 6: "CONTEXT" })],
    ["an offset that is not a number", stateFields({ 7: "4" })],
    ["a negative offset", stateFields({ 7: -1 })],
    ["a fractional offset", stateFields({ 7: 1.5 })],
    ["offset 0 (the first page takes no token)", stateFields({ 7: 0 })],
  ])("refuse a token with %s with INVALID_ARGUMENT", (_, fields) => {
    expectError(() => decodeStateToken(KEY, tokenOf(fields)), "INVALID_ARGUMENT", BAD);
  });

  it.each([
    ["another workspace", { workspace: "other", sessionId: "s-1" }],
    ["another session of the same workspace", { workspace: "ws", sessionId: "s-2" }],
  ])("refuse a token issued for %s, saying so", (_, key) => {
    const token = tokenOf(stateFields());
    expectError(() => decodeStateToken(key, token), "INVALID_ARGUMENT", OTHER);
  });
});
