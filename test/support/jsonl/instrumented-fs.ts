/**
 * An FsOps wrapper for tests: counts every call by name and lets a test
 * run a hook before a call: to delay it, to fail it with an errno, or to
 * answer it itself (a hook returning a value replaces the real call, e.g.
 * a short write).
 */
import { type FsOps, nodeFs } from "../../../src/storage/jsonl/fs-ops.js";

export type OpName = keyof FsOps;
export type Hook = (...args: never[]) => unknown;

export interface InstrumentedFs {
  readonly ops: FsOps;
  readonly counts: Record<string, number>;
  /** Hooks by operation name; replace them at any time. */
  readonly hooks: Partial<Record<OpName, Hook>>;
}

export function instrumentedFs(): InstrumentedFs {
  const counts: Record<string, number> = {};
  const hooks: Partial<Record<OpName, Hook>> = {};
  const ops = {} as Record<OpName, unknown>;
  for (const name of Object.keys(nodeFs) as OpName[]) {
    const real = nodeFs[name] as (...args: unknown[]) => Promise<unknown>;
    ops[name] = async (...args: unknown[]) => {
      counts[name] = (counts[name] ?? 0) + 1;
      const answer = await (hooks[name] as ((...a: unknown[]) => unknown) | undefined)?.(...args);
      return answer === undefined ? real(...args) : answer;
    };
  }
  return { ops: ops as unknown as FsOps, counts, hooks };
}

/** An fs error as node raises it. */
export function errno(code: string): Error {
  return Object.assign(new Error(`${code}: injected by the test`), { code });
}
