/**
 * Negative-control switches for the reliability battery (test/reliability).
 * Each turns ONE durability rule off so that the test proving the rule can
 * be shown to fail without it; a test that still passes with its rule off
 * proves nothing. Read from `SESSIOND_DEBUG` (comma-separated names) by
 * `sessiond serve` only, announced loudly on stderr, never documented as a
 * feature.
 */

/** Each switch, with the rule it turns off. */
export const DEBUG_SWITCHES = {
  /** jsonl: no fdatasync / fsync at all. Caught by T2 (power loss). */
  noFsync: "fdatasync / fsync before acknowledging",
  /** jsonl: no directory fsync (file data still synced). Caught by T2. */
  noDirFsync: "directory fsync after create / link / unlink",
  /** jsonl: append after a torn tail without repairing it. Caught by T2 / T5. */
  noTailRepair: "torn-tail repair before appending",
  /** jsonl: no cross-process lock. Caught by T4. */
  noCrossProcessLock: "cross-process lock",
  /** jsonl: lock kept, but no re-read of the file under it. Caught by T4. */
  noFencing: "fencing re-read under the lock",
  /** jsonl: the persisted listing index trusted without a stat of each file. Caught by T10. */
  noListingIndexCheck: "listing index entries checked against a stat of their file",
  /** jsonl: redaction overwrites the log in place (no copy, fsync, rename, dir fsync). Caught by T13. */
  redactInPlace: "redaction's copy of the log, fsync, rename over it and directory fsync",
  /** store: WatchEntries replays before subscribing. Caught by T7. */
  noSubscribeFirst: "subscribe before replay (WatchEntries)",
  /** store: an append's blobs are written after its entry, not before. Caught by T11. */
  blobsAfterAck: "a blob durable before the entry that names it",
} as const;

export type DebugSwitch = keyof typeof DEBUG_SWITCHES;
export type DebugSwitches = Partial<Record<DebugSwitch, true>>;

/** Parses `SESSIOND_DEBUG`; unknown names are an error (a typo must not pass silently). */
export function parseDebugSwitches(value: string | undefined): DebugSwitches {
  const out: DebugSwitches = {};
  for (const raw of (value ?? "").split(",")) {
    const name = raw.trim();
    if (name === "") continue;
    if (!Object.hasOwn(DEBUG_SWITCHES, name)) {
      throw new Error(
        `SESSIOND_DEBUG: unknown switch "${name}" (known: ${Object.keys(DEBUG_SWITCHES).join(", ")})`,
      );
    }
    out[name as DebugSwitch] = true;
  }
  return out;
}
