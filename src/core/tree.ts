import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { invalidArgument } from "./errors.js";
import { quote } from "./ids.js";

/**
 * Tree algorithms over entries that name their parent. Pure and total: bad
 * shapes (duplicate ids, missing parents, cycles) are reported as errors,
 * never as a hang or a crash. A log built by SessionLog cannot contain a
 * cycle (a parent always precedes its child), but imported data can.
 */

/** Finds an entry by id; undefined when absent. */
export type Lookup = (id: string) => Entry | undefined;

/** Indexes entries by id; a duplicate id is an error naming it. */
export function entriesById(entries: Iterable<Entry>): Map<string, Entry> {
  const byId = new Map<string, Entry>();
  for (const e of entries) {
    if (byId.has(e.id)) throw invalidArgument(`duplicate entry id ${quote(e.id)}`);
    byId.set(e.id, e);
  }
  return byId;
}

/**
 * The path root → `id`, following parent ids. Throws on a missing entry, a
 * missing parent or a cycle (the `seen` set bounds the walk).
 */
export function pathTo(lookup: Lookup, id: string): Entry[] {
  const path: Entry[] = [];
  const seen = new Set<string>();
  let current: string | undefined = id;
  while (current !== undefined) {
    if (seen.has(current)) throw invalidArgument(`cycle in the entry tree at ${quote(current)}`);
    seen.add(current);
    const entry = lookup(current);
    if (entry === undefined) {
      throw invalidArgument(
        current === id
          ? `entry ${quote(id)} not found`
          : `missing parent entry ${quote(current)} on the path to ${quote(id)}`,
      );
    }
    path.push(entry);
    current = entry.parentId;
  }
  path.reverse();
  return path;
}

/** True when `ancestor` is `id` itself or lies on the path root → `id`. */
export function isOnPathTo(lookup: Lookup, ancestor: string, id: string): boolean {
  const seen = new Set<string>();
  let current: string | undefined = id;
  // Stryker disable next-line ConditionalExpression: forced true, an undefined `current` is added to `seen` once and ends the next turn: one more turn, the same false
  while (current !== undefined && !seen.has(current)) {
    if (current === ancestor) return true;
    seen.add(current);
    current = lookup(current)?.parentId;
  }
  return false;
}

/** The deepest entry on both paths root → a and root → b; undefined if they share no root. */
export function lowestCommonAncestor(lookup: Lookup, a: string, b: string): Entry | undefined {
  const onA = new Set(pathTo(lookup, a).map((e) => e.id));
  const pathB = pathTo(lookup, b);
  for (let i = pathB.length - 1; i >= 0; i--) {
    const e = pathB[i] as Entry;
    if (onA.has(e.id)) return e;
  }
  return undefined;
}

/** Children of every entry, in input order (the tree is stored parent-only). */
export function childrenIndex(entries: Iterable<Entry>): Map<string, Entry[]> {
  const children = new Map<string, Entry[]>();
  for (const e of entries) {
    if (e.parentId === undefined) continue;
    const list = children.get(e.parentId);
    if (list === undefined) children.set(e.parentId, [e]);
    else list.push(e);
  }
  return children;
}

/**
 * Checks that a set of entries forms one tree: unique ids, exactly one root,
 * every parent present, no cycle. Used on imported data before it is stored.
 */
export function checkTree(entries: readonly Entry[]): Map<string, Entry> {
  const byId = entriesById(entries);
  const roots = entries.filter((e) => e.parentId === undefined);
  if (roots.length !== 1) {
    throw invalidArgument(`a session has exactly one root entry; found ${roots.length}`);
  }
  // Walk up from every entry until a checked one: linear overall, and the
  // per-walk `seen` set turns a cycle into an error instead of a hang.
  const done = new Set<string>();
  for (const e of entries) {
    const seen = new Set<string>();
    let current: Entry = e;
    while (!done.has(current.id)) {
      if (seen.has(current.id))
        throw invalidArgument(`cycle in the entry tree at ${quote(current.id)}`);
      seen.add(current.id);
      const parentId: string | undefined = current.parentId;
      if (parentId === undefined) break;
      const parent = byId.get(parentId);
      if (parent === undefined) {
        throw invalidArgument(`entry ${quote(current.id)} names missing parent ${quote(parentId)}`);
      }
      current = parent;
    }
    for (const id of seen) done.add(id);
  }
  return byId;
}

/**
 * Ids of the entries on the path root → `leafId` whose seq is above
 * `afterSeq`. In a stored log a parent precedes its child, so seqs fall on
 * the walk up from the leaf and it stops at the first entry at or below
 * `afterSeq`: a page of the tree costs the part of the path it can hold,
 * not the whole path. A parent whose seq does not fall is reported (an
 * unordered or cyclic set of entries would otherwise give a wrong answer or
 * no answer).
 */
export function pathIdsAfter(lookup: Lookup, leafId: string, afterSeq: number): Set<string> {
  const ids = new Set<string>();
  let entry = lookup(leafId);
  if (entry === undefined) throw invalidArgument(`entry ${quote(leafId)} not found`);
  while (entry.seq > afterSeq) {
    ids.add(entry.id);
    if (entry.parentId === undefined) break;
    const parent = lookup(entry.parentId);
    if (parent === undefined) {
      throw invalidArgument(`missing parent entry ${quote(entry.parentId)} of ${quote(entry.id)}`);
    }
    if (parent.seq >= entry.seq) {
      throw invalidArgument(
        `entry ${quote(entry.id)} does not follow its parent ${quote(parent.id)} in seq order`,
      );
    }
    entry = parent;
  }
  return ids;
}
