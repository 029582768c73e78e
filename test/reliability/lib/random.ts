/**
 * A small seeded PRNG (mulberry32) so that every reliability run can be
 * replayed from the seed printed in its summary line. Not for security.
 */
export class Rng {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  /** A child generator, for independent streams (per writer, per round). */
  fork(): Rng {
    return new Rng(this.int(1, 0x7fffffff));
  }
}
