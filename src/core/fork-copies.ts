import type { SessionInfo } from "../../gen/sessiond/v1/entry_pb.js";

/**
 * The seq of the last entry ForkSession copied into a session (0 when it
 * is no fork, or a fork of a source's root, which copies nothing): the
 * copies are seqs 2..n of a fork (planFork), ending at the copy of the
 * fork's target, whose id they keep, so the target's id in the fork says
 * where they end. Usage sums leave the copies out: they were billed in the
 * source session.
 */
export function forkCopiesThrough(
  info: SessionInfo,
  seqOf: (id: string) => bigint | number | undefined,
): number {
  const target = info.forkedFrom?.entryId;
  if (target === undefined || target === "") return 0;
  const seq = seqOf(target);
  return seq === undefined ? 0 : Number(seq);
}
