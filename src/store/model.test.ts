import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { expectCode } from "../../test/support/fixtures.js";
import {
  allEntries,
  asModel,
  ENGINE_FACTORIES,
  type EngineFixture,
  ModelSession,
  messageEntry,
  messagesOf,
  pick,
  StoreModel,
} from "../../test/support/store-model.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * Model-based test of the store: random sequences of appends, rewinds,
 * resets, forks, compactions, labels, session switches and (for engines
 * whose storage outlives them) reopens, each checked against the naive
 * model of test/support/store-model.ts.
 */

interface Real {
  readonly fixture: EngineFixture;
  store: SessionStore;
}

type Cmd = fc.AsyncCommand<StoreModel, Real>;

const LABELS = ["alpha", "beta", "gamma"];

/** Checks every session of the model against the store. */
async function verify(m: StoreModel, r: Real): Promise<void> {
  expect((await r.store.list({ pageSize: 100 })).sessions.map((s) => s.id).sort()).toEqual(
    [...m.sessions.keys()].sort(),
  );
  for (const s of m.sessions.values()) {
    const real = await r.store.open(undefined, s.id);
    const entries = await allEntries(real);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => BigInt(i + 1)));
    expect(entries.map(asModel)).toEqual(s.entries);

    const tree = await real.tree();
    expect(tree.leafId).toBe(s.leafId);
    expect(tree.headSeq).toBe(s.entries.length);
    expect(tree.nodes.filter((n) => n.onCurrentPath).map((n) => n.id)).toEqual(s.pathIds());

    const context = await real.state();
    expect(context.leafId).toBe(s.leafId);
    expect(context.headSeq).toBe(BigInt(s.entries.length));
    expect(messagesOf(context)).toEqual(s.context());
    expect(messagesOf(await real.state({ view: View.HISTORY }))).toEqual(s.history());

    const meta = await real.meta();
    expect(meta.leafId).toBe(s.leafId);
    expect(meta.headSeq).toBe(BigInt(s.entries.length));
    expect(meta.messageCount).toBe(BigInt(s.entries.filter((e) => e.kind === "message").length));
  }
}

/** An entry id or label to aim a rewind / fork at, and the entry it means. */
function aim(s: ModelSession, n: number, byLabel: boolean): { ref: string; target: string } {
  const labels = s.labels();
  if (byLabel && labels.length > 0) {
    const ref = pick(labels, n);
    return { ref, target: s.labelEntry(ref) as string };
  }
  const target = pick(s.pointable(), n).id;
  return { ref: target, target };
}

async function openCurrent(m: StoreModel, r: Real): Promise<Session> {
  return r.store.open(undefined, m.current);
}

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
    expect(result.leafId).toBe(s.leafId);
    await verify(m, r);
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
      await expectCode(() => session.rewind(ref, { entryId }), "FAILED_PRECONDITION");
    } else {
      const result = await session.rewind(ref, { entryId, allowBeforeCompaction: this.force });
      s.add({ id: entryId, parentId: s.leafId, kind: "leaf", target });
      expect(result.leafId).toBe(target);
    }
    await verify(m, r);
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
    await verify(m, r);
  }
  toString = () => "reset";
}

class ForkCmd implements Cmd {
  constructor(
    readonly n: number,
    readonly byLabel: boolean,
  ) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const source = m.current;
    const { ref, target } = aim(m.session, this.n, this.byLabel);
    const forkId = m.nextId("fork-");
    const meta = await r.store.fork(undefined, source, { entry: ref, sessionId: forkId });
    expect(meta.forkedFrom).toMatchObject({ sessionId: source, entryId: target });
    const [root] = (await (await r.store.open(undefined, forkId)).entries(0, 1)).entries;
    m.fork(forkId, (root as Entry).id, target);
    await verify(m, r);
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
    await verify(m, r);
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
    await verify(m, r);
  }
  toString = () => `label(${pick(LABELS, this.n)})`;
}

/** Folds at a random entry (time travel) and compares with the model's fold there. */
class TimeTravelCmd implements Cmd {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const s = m.session;
    const at = pick(s.pointable(), this.n).id;
    const session = await openCurrent(m, r);
    const context = await session.state({ atEntryId: at });
    expect(context.leafId).toBe(at);
    expect(context.currentLeafId).toBe(s.leafId);
    expect(messagesOf(context)).toEqual(s.context(at));
    const history = await session.state({ atEntryId: at, view: View.HISTORY });
    expect(messagesOf(history)).toEqual(s.history(at));
  }
  toString = () => `timeTravel(#${this.n})`;
}

class SwitchCmd implements Cmd {
  constructor(readonly n: number) {}
  check = (m: Readonly<StoreModel>) => m.sessions.size > 1;
  async run(m: StoreModel, r: Real): Promise<void> {
    m.current = pick([...m.sessions.keys()].sort(), this.n);
    await verify(m, r);
  }
  toString = () => `switch(#${this.n})`;
}

class ReopenCmd implements Cmd {
  check = () => true;
  async run(m: StoreModel, r: Real): Promise<void> {
    const reopen = r.fixture.reopen as () => Promise<EngineFixture["engine"]>;
    r.store = new SessionStore(await reopen());
    await verify(m, r);
  }
  toString = () => "reopen";
}

function commandArbitraries(withReopen: boolean): fc.Arbitrary<Cmd>[] {
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
    fc.nat().map((n) => new TimeTravelCmd(n)),
    fc.nat().map((n) => new SwitchCmd(n)),
  ];
  if (withReopen) arbs.push(fc.constant(new ReopenCmd()));
  return arbs;
}

describe.each(ENGINE_FACTORIES)("the store on $name", (factory) => {
  const memory = factory.name === "memory";

  it("behaves like the model over random command sequences", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands(commandArbitraries(factory.reopens), {
          maxCommands: memory ? 30 : 20,
          size: "max",
        }),
        async (cmds) => {
          const fixture = await factory.open();
          try {
            const store = new SessionStore(fixture.engine);
            const { session } = await store.create({ sessionId: "main" });
            const model = new StoreModel("main");
            const main = new ModelSession("main");
            main.add({ id: session.leafId, parentId: undefined, kind: "info" });
            model.sessions.set("main", main);
            await fc.asyncModelRun(() => ({ model, real: { fixture, store } }), cmds);
          } finally {
            await fixture.dispose();
          }
        },
      ),
      { numRuns: memory ? 50 : 15 },
    );
  });
});
