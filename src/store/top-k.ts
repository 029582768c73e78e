/** Bounded top-k selection for listing pages. */
/**
 * The `k` smallest items under `compare` among those `keep` accepts, in
 * order: a bounded max-heap, O(n log k), instead of sorting every session
 * of a workspace to show one page.
 */
export function smallest<T>(
  items: readonly T[],
  k: number,
  keep: (item: T) => boolean,
  compare: (a: T, b: T) => number,
): T[] {
  const heap: T[] = [];
  if (k <= 0) return heap;
  const up = (i: number) => {
    const item = heap[i] as T;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as T;
      // Stryker disable next-line EqualityOperator: moving an item above a parent that compares equal keeps a valid heap and the same selection under compare
      if (compare(p, item) >= 0) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = item;
  };
  const down = (i: number) => {
    const item = heap[i] as T;
    const n = heap.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (
        right < n &&
        // Stryker disable next-line EqualityOperator: of two children that compare equal either may move up; the heap and the selection under compare are the same
        compare(heap[right] as T, heap[child] as T) > 0
      ) {
        child = right;
      }
      const c = heap[child] as T;
      // Stryker disable next-line EqualityOperator: moving an item below a child that compares equal keeps a valid heap and the same selection under compare
      if (compare(c, item) <= 0) break;
      heap[i] = c;
      i = child;
    }
    heap[i] = item;
  };
  for (const item of items) {
    if (!keep(item)) continue;
    if (heap.length < k) {
      heap.push(item);
      up(heap.length - 1);
      continue;
    }
    // Stryker disable next-line EqualityOperator: replacing the largest kept item with one that compares equal leaves the same selection under compare
    if (compare(item, heap[0] as T) < 0) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort(compare);
}
