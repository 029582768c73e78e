/**
 * LangGraph's own conformance suite for checkpointers
 * (@langchain/langgraph-checkpoint-validation: put, putWrites, getTuple,
 * list, deleteThread, and its opt-in getDeltaChannelHistory cases) against
 * SessiondSaver over a server on JSONL and on PostgreSQL. Every case runs;
 * none is skipped. Each checkpointer the suite asks for gets a workspace
 * of its own on the engine's server (the suite lists "all threads").
 */
import {
  type CheckpointSaverTestInitializer,
  deltaChannelHistoryTests,
  specTest,
} from "@langchain/langgraph-checkpoint-validation";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } from "vitest";
import { SessiondSaver } from "../../src/adapters/langgraph/index.js";
import { SessionStore } from "../../src/store/index.js";
import { pgSkip, STORE_ENGINE_FACTORIES } from "../support/store-engines.js";
import type { EngineFixture } from "../support/store-model.js";
import { type AdapterServer, serveStore } from "./support.js";

// The suite is written against vitest's globals.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

const ENGINES = STORE_ENGINE_FACTORIES.filter(
  (f) => f.name === "jsonl" || (f.name === "postgres" && pgSkip === undefined),
);
if (pgSkip !== undefined) {
  test.skip(`LangGraph conformance on PostgreSQL SKIPPED: ${pgSkip}`, () => {});
}

for (const factory of ENGINES) {
  let fixture: EngineFixture;
  let srv: AdapterServer;
  let n = 0;
  const initializer: CheckpointSaverTestInitializer<SessiondSaver> = {
    checkpointerName: `SessiondSaver on ${factory.name}`,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      fixture = await factory.open();
      srv = await serveStore(new SessionStore(fixture.engine));
    },
    async afterAll() {
      await srv?.close();
      await fixture?.dispose();
    },
    createCheckpointer() {
      n += 1;
      return new SessiondSaver({ client: srv.client, workspace: `lg-${process.pid}-${n}` });
    },
  };
  specTest(initializer);
  describe(initializer.checkpointerName, () => deltaChannelHistoryTests(initializer));
}
