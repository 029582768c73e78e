import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import { appendStep, STEP_IDS } from "../../test/support/entry-arbitrary.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { isSessiondError } from "../core/errors.js";
import { SessionStore } from "./session-store.js";

/**
 * Random entries of every kind, with hard strings and Struct data (keys
 * such as "toString" and "constructor", numbers and timestamps at their
 * edges), appended one at a time or as a batch of two, under ids that
 * collide: every request either answers or is refused with a domain error
 * (never a TypeError or a library's error, which a client would get as
 * INTERNAL), and what was stored reads back the same after a restart.
 */

describe.each(STORE_ENGINE_FACTORIES)("hostile entries on $name", (factory) => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it("each request answers or is refused with a domain error; a restart reads the same", async () => {
    let stored = 0;
    const runs = factory.name === "postgres" ? 15 : 40;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(appendStep, fc.boolean()), { minLength: 1, maxLength: 6 }),
        async (steps) => {
          await fixture?.dispose();
          fixture = await factory.open();
          const store = new SessionStore(fixture.engine);
          /** The request's answer, or undefined when it was refused with a domain error. */
          const answer = async <T>(request: () => Promise<T>): Promise<T | undefined> => {
            try {
              return await request();
            } catch (err) {
              if (isSessiondError(err) && err.code !== "INTERNAL") return undefined;
              throw err;
            }
          };
          await store.create({ sessionId: "s" });
          const session = await store.open(undefined, "s");
          /** The ids of the entries the appends wrote, in order. */
          const written: string[] = [];
          for (const [{ entry, id, parent }, batch] of steps) {
            const e = create(EntrySchema, { ...entry, seq: 0n, parentId: parent });
            e.id = id ?? "";
            const next = create(EntrySchema, {
              ...e,
              id: e.id && `${e.id}x`,
              parentId: e.id || undefined,
            });
            const result = await answer(() => session.append(batch ? [e, next] : e));
            if (result !== undefined && !result.deduplicated) {
              written.push(...result.entries.map((w) => w.id));
            }
          }
          // What was acknowledged is the log, in order, after the root.
          const log = (await session.entries()).entries.map((w) => w.id);
          expect(log.slice(1)).toEqual(written);
          stored += written.length;
          for (const view of [View.CONTEXT, View.HISTORY]) {
            await answer(() => session.statePage({ view, pageSize: 1 }));
            for (const atEntryId of STEP_IDS)
              await answer(() => session.state({ view, atEntryId }));
          }
          await answer(() => session.tree());
          await answer(() => session.entries());
          await answer(() => store.search({ query: "a" }));
          await answer(() => store.list());
          for (const entry of STEP_IDS) {
            await answer(() => store.fork(undefined, "s", { sessionId: `f-${entry}`, entry }));
            await answer(() => session.rewind(entry));
          }
          const before = await session.state({ view: View.HISTORY });
          if (fixture.reopen !== undefined) {
            const again = new SessionStore(await fixture.reopen());
            const after = await (await again.open(undefined, "s")).state({ view: View.HISTORY });
            expect(after).toEqual(before);
          }
        },
      ),
      { numRuns: runs },
    );
    // Not only refusals: a good share of the appends were stored and read back.
    expect(stored).toBeGreaterThan(runs / 4);
  });
});
