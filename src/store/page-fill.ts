import { invalidArgument } from "../core/errors.js";

/**
 * How a page of a tree or a state is asked for. A count and a byte budget
 * bound it; the budget is the caller's (a server derives it from its
 * largest response, and knows how its codec will size an item).
 */
export interface PageRequest<T> {
  /** At most this many items; 0 or unset = no count limit. */
  pageSize?: number | undefined;
  /** next_page_token of the previous page; empty or unset = the first page. */
  pageToken?: string | undefined;
  /** At most this many bytes of items (as sizeOf counts them); unset = no limit. */
  maxBytes?: number | undefined;
  /** Size of one item on the wire. */
  sizeOf?: ((item: T) => number) | undefined;
}

/**
 * Takes items while the page has room. The first item is always taken,
 * even when it alone is over the budget, so that reading page after page
 * always moves on.
 */
export function fillPage<T>(items: Iterable<T>, req: PageRequest<T>): T[] {
  const maxItems = req.pageSize ?? 0;
  if (!Number.isSafeInteger(maxItems) || maxItems < 0) {
    throw invalidArgument(`page_size ${maxItems} is out of range`);
  }
  const maxBytes = req.maxBytes ?? Number.POSITIVE_INFINITY;
  const sizeOf = req.sizeOf;
  const page: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (maxItems > 0 && page.length >= maxItems) break;
    if (sizeOf !== undefined) {
      bytes += sizeOf(item);
      if (page.length > 0 && bytes > maxBytes) break;
    }
    page.push(item);
  }
  return page;
}

/** The items of `list` from index `start` on, without copying. */
export function* itemsFrom<T>(list: readonly T[], start: number): Generator<T> {
  for (let i = start; i < list.length; i++) yield list[i] as T;
}

/** The items of `list` before index `end`, last first, without copying. */
export function* itemsBefore<T>(list: readonly T[], end: number): Generator<T> {
  for (let i = end - 1; i >= 0; i--) yield list[i] as T;
}
