/**
 * The files quick mode mutates: those of the mutated set that differ from
 * the base, in the working tree as it is (committed, staged, unstaged and
 * untracked changes alike), so a run before a commit checks what that
 * commit will hold. Deleted files have nothing left to mutate.
 */
import { execFileSync } from "node:child_process";

/** Either the files to mutate, or why there is no base to compare with. */
export type ChangedFiles = { files: string[] } | { noBase: string };

/**
 * `mutated` and `notMutated` are Stryker's globs (`src/core/**\/*.ts`); git
 * reads them as `:(glob)` pathspecs, which have the same `**` rules.
 */
export function changedMutatedFiles(
  base: string,
  mutated: readonly string[],
  notMutated: readonly string[],
): ChangedFiles {
  const baseCommit = git(["rev-parse", "--verify", "-q", `${base}^{commit}`])?.trim();
  if (baseCommit === undefined) {
    return { noBase: `${base} names no commit in this clone` };
  }
  const since = git(["merge-base", baseCommit, "HEAD"])?.trim() ?? baseCommit;
  const pathspecs = [
    ...mutated.map((glob) => `:(glob)${glob}`),
    ...notMutated.map((glob) => `:(glob,exclude)${glob}`),
  ];
  const changed = git(["diff", "--name-only", "--diff-filter=d", since, "--", ...pathspecs]);
  const untracked = git(["ls-files", "--others", "--exclude-standard", "--", ...pathspecs]);
  if (changed === undefined || untracked === undefined) {
    throw new Error(`git could not list the files changed since ${base}`);
  }
  const files = new Set([...lines(changed), ...lines(untracked)]);
  return { files: [...files].sort() };
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

/** stdout of a git command, or undefined when it fails. */
function git(args: string[]): string | undefined {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
}
