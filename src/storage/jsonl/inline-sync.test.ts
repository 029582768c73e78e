import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendOf, rootEntry, user } from "../../../test/support/fixtures.js";
import { keyOf, removeDir, tempDir } from "../../../test/support/jsonl/fixtures.js";
import { instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import type { SessionKey } from "../engine.js";
import { admitted, FAST_MS, InlineSync, QUIET_MS } from "./inline-sync.js";
import { JsonlEngine } from "./jsonl-engine.js";

/** An InlineSync on a clock the test moves. */
function clocked(): { sync: InlineSync; clock: { t: number } } {
  const clock = { t: 1_000 };
  return { sync: new InlineSync(() => clock.t), clock };
}

/** A flush of this disk: ~0.3 ms, like back-to-back flushes here. */
const FAST_FLUSH = 0.3 * FAST_MS;

/** How many fast flushes it takes until a flush may run inline (at most 1,000). */
function fastUntilInline(sync: InlineSync): number {
  let n = 0;
  while (!sync.inline && n < 1_000) {
    sync.flushed(FAST_FLUSH);
    n++;
  }
  return n;
}

describe("InlineSync: when a flush may block the main thread", () => {
  it("a new engine proves its disk fast with a dozen flushes through the pool first", () => {
    const { sync } = clocked();
    expect(sync.inline).toBe(false);
    const n = fastUntilInline(sync);
    expect(n).toBeGreaterThanOrEqual(8);
    expect(n).toBeLessThanOrEqual(16);
  });

  it("a slow flush sends the next few back to the pool; a failed one, many more", () => {
    const { sync } = clocked();
    fastUntilInline(sync);
    sync.flushed(8 * FAST_MS);
    expect(sync.inline).toBe(false);
    expect(fastUntilInline(sync)).toBeLessThanOrEqual(6);
    sync.flushed(Number.POSITIVE_INFINITY);
    expect(sync.inline).toBe(false);
    expect(fastUntilInline(sync)).toBeGreaterThanOrEqual(20);
  });

  it("a disk that turns slow goes back to the pool at once and stays there", () => {
    const { sync } = clocked();
    fastUntilInline(sync);
    for (let i = 0; i < 100; i++) {
      sync.flushed(2 * FAST_MS);
      expect(sync.inline).toBe(false);
    }
  });

  it("an occasional slow flush (one in 16, 3 ms) among fast ones: every flush stays inline", () => {
    const { sync } = clocked();
    fastUntilInline(sync);
    let inline = 0;
    for (let i = 0; i < 160; i++) {
      if (sync.inline) inline++;
      sync.flushed(i % 16 === 15 ? 3 * FAST_MS : FAST_FLUSH);
    }
    expect(inline).toBe(160);
  });

  it("not for QUIET_MS after a write arrived while another was unanswered", () => {
    const { sync, clock } = clocked();
    fastUntilInline(sync);
    sync.arrived();
    sync.arrived();
    sync.answered();
    clock.t += QUIET_MS - 1;
    expect(sync.inline).toBe(false);
    clock.t += 1;
    expect(sync.inline).toBe(true);
  });

  it("writes one after the other keep it quiet", () => {
    const { sync, clock } = clocked();
    fastUntilInline(sync);
    for (let i = 0; i < 5; i++) {
      sync.arrived();
      expect(sync.inline).toBe(true);
      sync.answered();
      clock.t += 1;
    }
  });

  it("admitted counts an answer once, whichever callback and however often it is called", () => {
    const { sync, clock } = clocked();
    fastUntilInline(sync);
    const seen: unknown[] = [];
    const first = admitted<number>(
      sync,
      (v) => seen.push(v),
      (e) => seen.push(e),
    );
    first.resolve(1);
    first.reject("again");
    first.resolve(2);
    // Had the extra calls been counted, the next overlap would go unnoticed.
    admitted<number>(
      sync,
      () => undefined,
      () => undefined,
    );
    admitted<number>(
      sync,
      () => undefined,
      () => undefined,
    );
    expect(seen).toEqual([1, "again", 2]);
    clock.t += QUIET_MS - 1;
    expect(sync.inline).toBe(false);
  });
});

describe("the JSONL engine's flushes", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  /**
   * The engine on an FsOps that records the `inline` hint of every
   * fdatasync and answers it itself, `flushMs` later on the policy's clock
   * (a test clock: the disk's speed is the test's choice, whatever the
   * machine is doing meanwhile).
   */
  function engineWithHints(flushMs: number) {
    const fs = instrumentedFs();
    const clock = { t: 1_000 };
    const hints: boolean[] = [];
    fs.hooks.fdatasync = (_fd: number, inline?: boolean) => {
      hints.push(inline === true);
      clock.t += flushMs;
      return "answered by the test";
    };
    const inlineSync = new InlineSync(() => clock.t);
    return { engine: new JsonlEngine({ dataDir, fs: fs.ops, inlineSync }), hints };
  }

  async function appendInTurn(engine: JsonlEngine, k: SessionKey, n: number): Promise<void> {
    for (let i = 0; i < n; i++) await engine.append(k, appendOf([user(`m${i}`)]));
  }

  it("appends one after the other on a fast disk: a dozen through the pool, then inline", async () => {
    const { engine, hints } = engineWithHints(0);
    const k = keyOf("lone");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      hints.length = 0;
      await appendInTurn(engine, k, 40);
      const pooled = hints.indexOf(true);
      expect(pooled).toBeGreaterThanOrEqual(8);
      expect(pooled).toBeLessThanOrEqual(16);
      expect(hints).toEqual([...Array(pooled).fill(false), ...Array(40 - pooled).fill(true)]);
    } finally {
      await engine.close();
    }
  });

  it("on a slow disk: always the pool", async () => {
    const { engine, hints } = engineWithHints(2 * FAST_MS);
    const k = keyOf("slow");
    try {
      await engine.create(k, [rootEntry(k.sessionId)]);
      await appendInTurn(engine, k, 40);
      expect(hints).toHaveLength(40);
      expect(hints.filter((h) => h)).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it("appends to two sessions at once: the pool", async () => {
    const { engine, hints } = engineWithHints(0);
    const a = keyOf("a");
    const b = keyOf("b");
    try {
      await engine.create(a, [rootEntry(a.sessionId)]);
      await engine.create(b, [rootEntry(b.sessionId)]);
      await appendInTurn(engine, a, 40);
      expect(hints.at(-1)).toBe(true);
      hints.length = 0;
      for (let i = 0; i < 8; i++) {
        await Promise.all([
          engine.append(a, appendOf([user(`a${i}`)])),
          engine.append(b, appendOf([user(`b${i}`)])),
        ]);
      }
      expect(hints).toHaveLength(16);
      expect(hints.filter((h) => h)).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
