import { describe, expect, it } from "vitest";
import { smallest } from "./top-k.js";

interface Item {
  readonly key: number;
}

const byKey = (a: Item, b: Item) => a.key - b.key;
const items: Item[] = [{ key: 3 }, { key: 1 }, { key: 2 }];

describe("smallest", () => {
  it.each([0, -1])("selects nothing for k = %i", (k) => {
    expect(smallest(items, k, () => true, byKey)).toEqual([]);
  });

  it("selects the k smallest kept items, in order", () => {
    expect(smallest(items, 2, (i) => i.key !== 1, byKey)).toEqual([{ key: 2 }, { key: 3 }]);
  });
});
