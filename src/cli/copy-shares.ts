/**
 * `sessiond copy` carries a workspace's share links along with its
 * sessions, so that links keep working on the new storage: the records are
 * copied as they are (the token's digest, never a token: none is stored),
 * and a share revoked in the source since an earlier copy is revoked in the
 * target too. A record already in the target is otherwise left alone
 * (copy never overwrites). A share whose session did not make it to the
 * target answers NOT_FOUND there, as for a deleted session.
 */
import type { StorageEngine } from "../storage/engine.js";

export interface ShareCopySummary {
  /** Records written to the target. */
  copied: number;
  /** Records the target had already (by digest). */
  existing: number;
  /** Of those, revoked in the target because the source has them revoked. */
  revoked: number;
}

/** Copies the share records of `workspaces` from `source` to `target` (engines without shares: none). */
export async function copyShares(
  source: StorageEngine,
  target: StorageEngine,
  workspaces: readonly string[],
): Promise<ShareCopySummary> {
  const out: ShareCopySummary = { copied: 0, existing: 0, revoked: 0 };
  const from = source.shares;
  const to = target.shares;
  if (from === undefined || to === undefined) return out;
  for (const workspace of workspaces) {
    for (const r of await from.list(workspace)) {
      const there = await to.byDigest(r.digest);
      if (there === undefined) {
        await to.put(r);
        out.copied++;
        continue;
      }
      out.existing++;
      if (there.workspace !== r.workspace) continue;
      if (r.revokedAtMs !== 0 && there.revokedAtMs === 0) {
        await to.revoke(workspace, r.digest, r.revokedAtMs);
        out.revoked++;
      }
    }
  }
  return out;
}
