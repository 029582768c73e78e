/**
 * The order of sessions in listings and searches by creation: creation
 * time in ms, then the id bytewise (JavaScript's < on ASCII ids, what the
 * PostgreSQL engine's COLLATE "C" gives). Negative when (ms, id) comes
 * first in ascending order.
 */
export function compareRootKeys(ms: number, id: string, otherMs: number, otherId: string): number {
  return ms - otherMs || (id < otherId ? -1 : id > otherId ? 1 : 0);
}
