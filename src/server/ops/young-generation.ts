import { PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

/**
 * The largest semi-space `sessiond serve` lets V8 grow its young generation
 * to, MB: what a fresh server already has once it has started (two
 * semi-spaces of 8 MB), half of V8's own limit on 64-bit machines (16 MB).
 */
export const SERVE_SEMI_SPACE_MB = 8;

/**
 * Keeps V8's young generation at `semiSpaceMb` per semi-space at most, for
 * the life of the process.
 *
 * Why: V8 doubles its young generation once more objects have survived its
 * scavenges than it holds, and never gives the pages back while the process
 * is idle. A burst that leaves many small objects behind (1,000 watch
 * streams opened at once keep ~10 MB) makes a fresh server grow from 8 to
 * 16 MB semi-spaces: +16 MB of resident memory, more than the streams
 * themselves (bench g8: 32 KB per idle stream, 17 KB with the cap). The
 * larger young generation buys no measurable CPU for this server's calls,
 * whose garbage is short-lived (bench g3 and g7 A/B, docs/performance-history.md "Native gRPC").
 *
 * How: V8 reads `--max-semi-space-size` only when the heap is set up, but
 * reads `--semi-space-growth-factor` at every growth (Node documents flags
 * changed after start as unsupported: young-generation.test.ts checks the
 * effect on the Node it runs on, so an upgrade that loses it fails there). After each garbage
 * collection the factor is set so that one growth cannot pass the cap (1
 * at the cap). Two growths between collections observed here (possible
 * only right after V8 shrank the young generation, a rare memory-reducing
 * collection) could pass it once, up to V8's own limit.
 *
 * Does nothing when the process was started with its own
 * `--max-semi-space-size` (an operator's choice wins). Process-wide: the
 * CLI calls it, an embedding process decides for itself. Returns a stop
 * function that ends the watching (the last factor stays).
 */
export function capYoungGeneration(
  semiSpaceMb: number,
  nodeOptions: readonly string[] = [...process.execArgv, process.env.NODE_OPTIONS ?? ""],
): () => void {
  if (nodeOptions.some((o) => /--max[-_]semi[-_]space[-_]size/.test(o))) return () => {};
  const cap = semiSpaceMb * 2 ** 20;
  let factor = 0;
  const adjust = () => {
    const next = growthFactor(cap);
    if (next === factor) return;
    factor = next;
    v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
  };
  adjust();
  const observer = new PerformanceObserver(adjust);
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}

/** The growth factor that keeps one growth of the young generation within `cap` bytes. */
export function growthFactor(cap: number, semiSpace = currentSemiSpace()): number {
  return Math.max(1, Math.floor(cap / Math.max(1, semiSpace)));
}

/** The size of one semi-space now, bytes (the new space holds two). */
export function currentSemiSpace(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return (space?.space_size ?? 0) / 2;
}
