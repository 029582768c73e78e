import { describe, expect, it } from "vitest";
import { expectError } from "../../test/support/fixtures.js";
import { fillPage, itemsFrom } from "./page-fill.js";

const sizes = [3, 4, 10, 2, 2];
const sizeOf = (i: number) => sizes[i] as number;
const all = [0, 1, 2, 3, 4];

describe("fillPage", () => {
  it("takes everything without a count or a budget", () => {
    expect(fillPage(all, {})).toEqual(all);
  });

  it("stops at the page size", () => {
    expect(fillPage(all, { pageSize: 2 })).toEqual([0, 1]);
  });

  it("stops before the item that would go over the budget", () => {
    expect(fillPage(all, { maxBytes: 9, sizeOf })).toEqual([0, 1]);
    expect(fillPage(itemsFrom(all, 3), { maxBytes: 4, sizeOf })).toEqual([3, 4]);
  });

  it("takes a first item bigger than the budget alone, so that paging moves on", () => {
    expect(fillPage(itemsFrom(all, 2), { maxBytes: 5, sizeOf })).toEqual([2]);
    expect(fillPage(all, { maxBytes: 0, sizeOf })).toEqual([0]);
  });

  it("applies the smaller of page size and budget", () => {
    expect(fillPage(itemsFrom(all, 3), { pageSize: 1, maxBytes: 100, sizeOf })).toEqual([3]);
    expect(fillPage(all, { pageSize: 4, maxBytes: 7, sizeOf })).toEqual([0, 1]);
  });

  it("refuses a negative or fractional page size with INVALID_ARGUMENT", () => {
    expectError(() => fillPage(all, { pageSize: -1 }), "INVALID_ARGUMENT", "page_size");
    expectError(() => fillPage(all, { pageSize: 1.5 }), "INVALID_ARGUMENT", "page_size");
  });
});
