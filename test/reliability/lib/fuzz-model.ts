/**
 * T5, part 2: model-based command sequences against the naive in-memory
 * model of test/support/store-model.ts (the commands are lifted from
 * src/store/model.test.ts, without vitest): append / rewind / reset / fork /
 * compaction / label / read (time travel, entries, tree, state) / watch /
 * session switch, plus on the JSONL engine reopen (a restarted process) and
 * tear (a crash in the middle of an append: the engine is closed, part of a
 * record, zeros or garbage are left at the end of the current session's
 * file, a new engine is opened). After a tear the next append must repair
 * the tail first (durability.md); without the repair (`noTailRepair`) the
 * new record is glued onto the partial line and the session diverges from
 * the model (the entry is missing, or the session is DATA_LOSS).
 *
 * A watcher follows one session as a client does: it subscribes to storage
 * events first, then replays from its cursor, and on every wake-up reads the
 * log from its cursor. After each command it must have reached the head
 * through wake-ups alone, having seen seq 1..n exactly once, in order, with
 * the model's entries. A reopen re-subscribes it on the new engine (a
 * reconnect resuming from its cursor).
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../../gen/sessiond/v1/session_pb.js";
import { type ErrorCode, isSessiondError } from "../../../src/core/errors.js";
import type { StorageEngine } from "../../../src/storage/engine.js";
import { JsonlEngine } from "../../../src/storage/jsonl/jsonl-engine.js";
import { sessionPath } from "../../../src/storage/jsonl/paths.js";
import { encodeRecord } from "../../../src/storage/jsonl/record.js";
import { MemoryEngine } from "../../../src/storage/memory.js";
import { SessionStore } from "../../../src/store/session-store.js";
import {
  allEntries,
  asModel,
  ModelSession,
  messageEntry,
  messagesOf,
  pick,
  StoreModel,
} from "../../support/store-model.js";

const WS = "default";
const LABELS = ["alpha", "beta", "gamma"];

class Divergence extends Error {}

function same(what: string, got: unknown, want: unknown): void {
  if (!isDeepStrictEqual(got, want)) {
    const show = (v: unknown) =>
      JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x))?.slice(0, 300);
    throw new Divergence(`${what}: got ${show(got)}, want ${show(want)}`);
  }
}

async function expectCode(call: () => Promise<unknown>, code: ErrorCode, what: string) {
  try {
    await call();
  } catch (err) {
    if (isSessiondError(err, code)) return;
    throw new Divergence(`${what}: want ${code}, got ${String(err).slice(0, 200)}`);
  }
  throw new Divergence(`${what}: want ${code}, but it succeeded`);
}

// ---------------------------------------------------------------------------
// Engines

export interface ModelFixture {
  readonly name: "memory" | "jsonl";
  engine: StorageEngine;
  /** Closes the engine and opens a new one on the same storage (jsonl only). */
  readonly reopen: (() => Promise<StorageEngine>) | undefined;
  /** The session file (jsonl only). */
  readonly fileOf: ((sessionId: string) => string) | undefined;
  dispose(): Promise<void>;
}

export async function openFixture(
  name: "memory" | "jsonl",
  debug: { noTailRepair?: boolean },
): Promise<ModelFixture> {
  if (name === "memory") {
    const engine = new MemoryEngine();
    return {
      name,
      engine,
      reopen: undefined,
      fileOf: undefined,
      dispose: () => engine.close(),
    };
  }
  const dataDir = await mkdtemp(join(tmpdir(), "sessiond-t5-model-"));
  const make = () => new JsonlEngine({ dataDir, debug, leaseIdleMs: 0 });
  const fixture: ModelFixture = {
    name,
    engine: make(),
    reopen: async () => {
      await fixture.engine.close();
      fixture.engine = make();
      return fixture.engine;
    },
    fileOf: (sessionId) => sessionPath(dataDir, WS, sessionId, false),
    async dispose() {
      await fixture.engine.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

// ---------------------------------------------------------------------------
// Watchers

/** A client following one session from seq 0 (see the file comment). */
class Watcher {
  readonly ids: string[] = [];
  cursor = 0;
  problem: string | undefined;
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => {};

  constructor(readonly sessionId: string) {}

  /** Subscribes first, then replays from the cursor. */
  attach(store: SessionStore): void {
    this.unsubscribe = store.engine.subscribe((ev) => {
      if (ev.workspace === WS && ev.sessionId === this.sessionId && ev.type !== "deleted") {
        this.wake(store);
      }
    });
    this.wake(store);
  }

  detach(): void {
    this.unsubscribe();
  }

  private wake(store: SessionStore): void {
    this.chain = this.chain.then(async () => {
      try {
        const session = await store.open(WS, this.sessionId);
        for (;;) {
          const page = await session.entries(this.cursor, 50);
          if (page.entries.length === 0) return;
          for (const e of page.entries) {
            if (Number(e.seq) !== this.cursor + 1) {
              this.problem ??= `watcher of ${this.sessionId} got seq ${e.seq} after ${this.cursor}`;
            }
            this.cursor = Number(e.seq);
            this.ids.push(e.id);
          }
        }
      } catch (err) {
        this.problem ??= `watcher of ${this.sessionId}: ${String(err).slice(0, 200)}`;
      }
    });
  }

  /** Resolves when every wake-up so far has been handled. */
  async idle(): Promise<void> {
    // Events may be emitted a tick after the call that caused them resolves.
    await new Promise((r) => setImmediate(r));
    let seen: Promise<void>;
    do {
      seen = this.chain;
      await seen;
    } while (seen !== this.chain);
  }
}

// ---------------------------------------------------------------------------
// The system under test and the commands

export interface Real {
  readonly fixture: ModelFixture;
  store: SessionStore;
  readonly watchers: Watcher[];
  /** Figures: commands run, tears made. */
  readonly counts: { commands: number; tears: number; watched: number };
}

type Cmd = fc.AsyncCommand<StoreModel, Real>;

/** Checks one session of the model against the store. */
async function verifySession(s: ModelSession, r: Real): Promise<void> {
  const real = await r.store.open(WS, s.id);
  const entries = await allEntries(real);
  same(
    `${s.id}: seqs`,
    entries.map((e) => Number(e.seq)),
    entries.map((_, i) => i + 1),
  );
  same(`${s.id}: entries`, entries.map(asModel), s.entries);
  const tree = await real.tree();
  same(`${s.id}: tree leaf`, tree.leafId, s.leafId);
  same(`${s.id}: tree head`, tree.headSeq, s.entries.length);
  same(
    `${s.id}: current path`,
    tree.nodes.filter((n) => n.onCurrentPath).map((n) => n.id),
    s.pathIds(),
  );
  const context = await real.state();
  same(`${s.id}: state leaf`, context.leafId, s.leafId);
  same(`${s.id}: state head`, context.headSeq, BigInt(s.entries.length));
  same(`${s.id}: context`, messagesOf(context), s.context());
  same(`${s.id}: history`, messagesOf(await real.state({ view: View.HISTORY })), s.history());
}

/** Every watcher has reached its session's head through wake-ups, with the model's entries. */
async function verifyWatchers(m: StoreModel, r: Real): Promise<void> {
  for (const w of r.watchers) {
    await w.idle();
    if (w.problem !== undefined) throw new Divergence(w.problem);
    const s = m.sessions.get(w.sessionId) as ModelSession;
    same(
      `watcher of ${w.sessionId}`,
      w.ids,
      s.entries.map((e) => e.id),
    );
  }
}

/** Every session, the listing and every watcher. */
export async function verifyAll(m: StoreModel, r: Real): Promise<void> {
  same(
    "listed sessions",
    (await r.store.list({ pageSize: 100 })).sessions.map((s) => s.id).sort(),
    [...m.sessions.keys()].sort(),
  );
  for (const s of m.sessions.values()) await verifySession(s, r);
  await verifyWatchers(m, r);
}

async function verifyCurrent(m: StoreModel, r: Real): Promise<void> {
  r.counts.commands++;
  await verifySession(m.session, r);
  await verifyWatchers(m, r);
}

function aim(s: ModelSession, n: number, byLabel: boolean): { ref: string; target: string } {
  const labels = s.labels();
  if (byLabel && labels.length > 0) {
    const ref = pick(labels, n);
    return { ref, target: s.labelEntry(ref) as string };
  }
  const target = pick(s.pointable(), n).id;
  return { ref: target, target };
}

const openCurrent = (m: StoreModel, r: Real) => r.store.open(WS, m.current);

class AppendCmd implements Cmd {
  constructor(
    readonly messages: readonly { role: "user" | "assistant"; text: string }[],
    readonly parentPick: number | undefined,
  ) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const explicit =
      this.parentPick === undefined ? undefined : pick(s.pointable(), this.parentPick).id;
    const ids = this.messages.map(() => m.nextId("e"));
    const batch = this.messages.map((msg, i) =>
      messageEntry(ids[i] as string, msg.role, msg.text, i === 0 ? explicit : undefined),
    );
    const result = await (await openCurrent(m, r)).append(batch);
    let parentId = explicit ?? s.leafId;
    this.messages.forEach((msg, i) => {
      const id = ids[i] as string;
      s.add({ id, parentId, kind: "message", role: msg.role, text: msg.text });
      parentId = id;
    });
    same("append leaf", result.leafId, s.leafId);
    await verifyCurrent(m, r);
  }
  toString = () =>
    `append(${this.messages.map((x) => x.role).join(",")}, parent#${this.parentPick})`;
}

class RewindCmd implements Cmd {
  constructor(
    readonly n: number,
    readonly byLabel: boolean,
    readonly force: boolean,
  ) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const { ref, target } = aim(s, this.n, this.byLabel);
    const session = await openCurrent(m, r);
    const entryId = m.nextId("mv");
    if (!this.force && s.beforeFloor(target)) {
      await expectCode(() => session.rewind(ref, { entryId }), "FAILED_PRECONDITION", "rewind");
    } else {
      const result = await session.rewind(ref, { entryId, allowBeforeCompaction: this.force });
      s.add({ id: entryId, parentId: s.leafId, kind: "leaf", target });
      same("rewind leaf", result.leafId, target);
    }
    await verifyCurrent(m, r);
  }
  toString = () =>
    `rewind(#${this.n}${this.byLabel ? ", label" : ""}${this.force ? ", force" : ""})`;
}

class ResetCmd implements Cmd {
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const entryId = m.nextId("rs");
    await (await openCurrent(m, r)).reset({ entryId });
    s.add({ id: entryId, parentId: s.leafId, kind: "leaf", target: s.rootId });
    await verifyCurrent(m, r);
  }
  toString = () => "reset";
}

class ForkCmd implements Cmd {
  constructor(
    readonly n: number,
    readonly byLabel: boolean,
  ) {}
  check = (m: Readonly<StoreModel>) => m.sessions.size < 12;
  async run(m: StoreModel, r: Real): Promise<void> {
    const source = m.current;
    const { ref, target } = aim(m.session, this.n, this.byLabel);
    const forkId = m.nextId("fork-");
    const meta = await r.store.fork(WS, source, { entry: ref, sessionId: forkId });
    same("forked from", meta.forkedFrom?.sessionId, source);
    same("forked at", meta.forkedFrom?.entryId, target);
    const [root] = (await (await r.store.open(WS, forkId)).entries(0, 1)).entries;
    m.fork(forkId, (root as Entry).id, target);
    await verifyCurrent(m, r);
  }
  toString = () => `fork(#${this.n}${this.byLabel ? ", label" : ""})`;
}

class CompactCmd implements Cmd {
  constructor(
    readonly start: number,
    readonly length: number,
    readonly summary: string,
  ) {}
  check = (m: Readonly<StoreModel>) => m.session.context().length > 0;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const items = s.context();
    const from = this.start % items.length;
    const replaces = items.slice(from, from + this.length).map((x) => x.entryId);
    const id = m.nextId("c");
    await (await openCurrent(m, r)).append({
      id,
      kind: { case: "compaction", value: { summary: this.summary, replacesEntryIds: replaces } },
    });
    s.add({ id, parentId: s.leafId, kind: "compaction", text: this.summary, replaces });
    await verifyCurrent(m, r);
  }
  toString = () => `compact(#${this.start}, ${this.length})`;
}

class LabelCmd implements Cmd {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const id = m.nextId("l");
    const text = pick(LABELS, this.n);
    await (await openCurrent(m, r)).append({ id, kind: { case: "label", value: { label: text } } });
    s.add({ id, parentId: s.leafId, kind: "label", text });
    await verifyCurrent(m, r);
  }
  toString = () => `label(${pick(LABELS, this.n)})`;
}

/** Reads: the fold at a random entry (time travel), and a random page of the raw log. */
class ReadCmd implements Cmd {
  constructor(
    readonly n: number,
    readonly after: number,
    readonly limit: number,
  ) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    r.counts.commands++;
    const s = m.session;
    const at = pick(s.pointable(), this.n).id;
    const session = await openCurrent(m, r);
    const context = await session.state({ atEntryId: at });
    same("time travel leaf", context.leafId, at);
    same("time travel current leaf", context.currentLeafId, s.leafId);
    same("time travel context", messagesOf(context), s.context(at));
    const history = await session.state({ atEntryId: at, view: View.HISTORY });
    same("time travel history", messagesOf(history), s.history(at));
    const after = this.after % (s.entries.length + 2);
    const page = await session.entries(after, this.limit);
    same(
      `page after ${after} limit ${this.limit}`,
      page.entries.map((e) => e.id),
      s.entries.slice(after, after + this.limit).map((e) => e.id),
    );
    same("page head", Number(page.headSeq), s.entries.length);
  }
  toString = () => `read(#${this.n}, after ${this.after}, limit ${this.limit})`;
}

class WatchCmd implements Cmd {
  check = (m: Readonly<StoreModel>) => m.sessions.size > 0;
  async run(m: StoreModel, r: Real): Promise<void> {
    const w = new Watcher(m.current);
    r.watchers.push(w);
    r.counts.watched++;
    w.attach(r.store);
    await verifyCurrent(m, r);
  }
  toString = () => "watch";
}

class SwitchCmd implements Cmd {
  constructor(readonly n: number) {}
  check = (m: Readonly<StoreModel>) => m.sessions.size > 1;
  async run(m: StoreModel, r: Real): Promise<void> {
    m.current = pick([...m.sessions.keys()].sort(), this.n);
    await verifyCurrent(m, r);
  }
  toString = () => `switch(#${this.n})`;
}

async function reopen(r: Real): Promise<void> {
  for (const w of r.watchers) {
    await w.idle();
    w.detach();
  }
  const reopenEngine = r.fixture.reopen as () => Promise<StorageEngine>;
  r.store = new SessionStore(await reopenEngine());
  for (const w of r.watchers) w.attach(r.store);
}

class ReopenCmd implements Cmd {
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    await reopen(r);
    r.counts.commands++;
    await verifyAll(m, r);
  }
  toString = () => "reopen";
}

export type TearShape = "partial" | "zeros" | "garbage";

/** A crash in the middle of an append to the current session, then a restart. */
class TearCmd implements Cmd {
  constructor(
    readonly shape: TearShape,
    readonly cut: number,
    readonly garbage: readonly number[],
  ) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    for (const w of r.watchers) await w.idle();
    await (r.fixture.reopen as () => Promise<StorageEngine>)();
    const s = m.session;
    const rec = Buffer.from(
      encodeRecord(messageEntry("torn-never-acked", "user", "lost in the crash")),
    );
    const bytes =
      this.shape === "partial"
        ? rec.subarray(0, 1 + Math.floor(this.cut * (rec.length - 2)))
        : this.shape === "zeros"
          ? Buffer.alloc(1 + Math.floor(this.cut * 300))
          : Buffer.from(this.garbage.map((b) => (b === 0x0a ? 0x20 : b)));
    const fh = await open((r.fixture.fileOf as (id: string) => string)(s.id), "a");
    try {
      await fh.write(bytes);
    } finally {
      await fh.close();
    }
    r.counts.tears++;
    await reopen(r);
    r.counts.commands++;
    await verifyAll(m, r);
  }
  toString = () => `tear(${this.shape}, ${this.cut.toFixed(3)})`;
}

export function commandArbs(jsonl: boolean): fc.Arbitrary<Cmd>[] {
  const text = fc.string({ unit: "grapheme", maxLength: 12 });
  const message = fc.record({ role: fc.constantFrom("user" as const, "assistant" as const), text });
  const arbs: fc.Arbitrary<Cmd>[] = [
    fc
      .tuple(
        fc.array(message, { minLength: 1, maxLength: 3 }),
        fc.option(fc.nat(), { nil: undefined }),
      )
      .map(([msgs, parent]) => new AppendCmd(msgs, parent)),
    fc
      .tuple(fc.nat(), fc.boolean(), fc.boolean())
      .map(([n, byLabel, force]) => new RewindCmd(n, byLabel, force)),
    fc.constant(new ResetCmd()),
    fc.tuple(fc.nat(), fc.boolean()).map(([n, byLabel]) => new ForkCmd(n, byLabel)),
    fc
      .tuple(fc.nat(), fc.integer({ min: 1, max: 3 }), text)
      .map(([start, length, summary]) => new CompactCmd(start, length, summary)),
    fc.nat().map((n) => new LabelCmd(n)),
    fc
      .tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 20 }))
      .map(([n, after, limit]) => new ReadCmd(n, after, limit)),
    fc.constant(new WatchCmd()),
    fc.nat().map((n) => new SwitchCmd(n)),
  ];
  if (jsonl) {
    arbs.push(fc.constant(new ReopenCmd()));
    arbs.push(
      fc
        .tuple(
          fc.constantFrom<TearShape>("partial", "partial", "zeros", "garbage"),
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 40 }),
        )
        .map(([shape, cut, garbage]) => new TearCmd(shape, cut, garbage)),
    );
  }
  return arbs;
}

/** Runs one command sequence on a fresh fixture; resolves with the divergence, if any. */
export async function runSequence(
  engine: "memory" | "jsonl",
  cmds: Iterable<Cmd>,
  debug: { noTailRepair?: boolean },
  counts: Real["counts"],
): Promise<string | undefined> {
  const fixture = await openFixture(engine, debug);
  const real: Real = {
    fixture,
    store: new SessionStore(fixture.engine),
    watchers: [],
    counts,
  };
  try {
    const { session } = await real.store.create({ sessionId: "main" });
    const model = new StoreModel("main");
    const main = new ModelSession("main");
    main.add({ id: session.leafId, parentId: undefined, kind: "info" });
    model.sessions.set("main", main);
    await fc.asyncModelRun(() => ({ model, real }), cmds);
    await verifyAll(model, real);
    return undefined;
  } catch (err) {
    return err instanceof Divergence ? err.message : `threw: ${String(err).slice(0, 300)}`;
  } finally {
    for (const w of real.watchers) w.detach();
    await fixture.dispose();
  }
}
