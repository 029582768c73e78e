/**
 * What every file of the storage conformance suite shares: the factory
 * contract (ConformanceHarness, ConformanceFactory), session keys in the
 * default workspace, and `conformanceSuite`, which gives each test a fresh
 * engine on empty storage and the helpers to check a result now and again
 * after a reopen.
 */
import { afterEach, beforeEach } from "vitest";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import type { SessionKey, StorageEngine } from "../../../src/storage/engine.js";
import { rootEntry } from "../../support/fixtures.js";

export interface ConformanceHarness {
  engine: StorageEngine;
  /** Closes the engine and opens a new one on the same storage. */
  reopen?: () => Promise<StorageEngine>;
  /** Opens another engine on the same storage, alive next to the current one. */
  sibling?: () => Promise<StorageEngine>;
  /** Disposes of the current engine and the storage. */
  cleanup: () => Promise<void>;
}

export type ConformanceFactory = () => Promise<ConformanceHarness>;

export const WS = "default";

export function key(sessionId: string, workspace = WS): SessionKey {
  return { workspace, sessionId };
}

export function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** The state of the test that runs: its harness, its current engine and the helpers on them. */
export interface ConformanceSuite {
  readonly harness: ConformanceHarness;
  /** The current engine (replaced by `persisted` and by a reopen when the harness can reopen). */
  engine: StorageEngine;
  /** Runs `check` now and, when the engine can be reopened, again after a reopen. */
  persisted(check: (e: StorageEngine) => Promise<void>): Promise<void>;
  /** Creates a session holding only its root (`rootEntry`) and returns the root. */
  createSession(sessionId: string, workspace?: string): Promise<Entry>;
  /** Every entry of a session, in seq order. */
  readAll(e: StorageEngine, k: SessionKey): Promise<Entry[]>;
}

/**
 * Registers, in the calling describe block, a fresh harness from `factory`
 * before each test and its cleanup after; returns the suite state the
 * tests of that block read (valid inside tests only).
 */
export function conformanceSuite(factory: ConformanceFactory): ConformanceSuite {
  let harness: ConformanceHarness | undefined;
  const suite: ConformanceSuite = {
    get harness(): ConformanceHarness {
      if (harness === undefined) throw new Error("no conformance harness outside a test");
      return harness;
    },
    engine: undefined as unknown as StorageEngine,
    async persisted(check) {
      await check(suite.engine);
      if (suite.harness.reopen !== undefined) {
        suite.engine = await suite.harness.reopen();
        await check(suite.engine);
      }
    },
    async createSession(sessionId, workspace = WS) {
      const root = rootEntry(sessionId);
      await suite.engine.create(key(sessionId, workspace), [root]);
      return root;
    },
    async readAll(e, k) {
      return (await e.read(k, 0, 1_000_000)).entries;
    },
  };

  beforeEach(async () => {
    harness = await factory();
    suite.engine = harness.engine;
  });

  afterEach(async () => {
    const done = harness;
    harness = undefined;
    await done?.cleanup();
  });

  return suite;
}
