/**
 * Assertions for refused requests at the store level: a refusal carries the
 * right code and names the offending entry or id, and leaves every stored
 * byte as it was, also as a restarted process reads it back. Shared by the
 * *-rules.test.ts files (one test per validation rule).
 */
import { toJsonString } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import type { ErrorCode, SessiondError } from "../../src/core/errors.js";
import type { StorageEngine } from "../../src/storage/engine.js";
import { expectCode } from "./fixtures.js";
import type { EngineFixture } from "./store-model.js";

/** One stored session as a client could observe it. */
interface StoredSession {
  workspace: string;
  sessionId: string;
  headSeq: number;
  leafId: string;
  messageCount: number;
  health: string;
  /** Every entry, in seq order, as canonical JSON. */
  entries: string[];
}

/** Every session of every workspace of `engine`, with every entry. */
export async function storedSessions(engine: StorageEngine): Promise<StoredSession[]> {
  const out: StoredSession[] = [];
  for (const workspace of (await engine.workspaces()).sort()) {
    const records = await engine.list(workspace);
    records.sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
    for (const r of records) {
      const key = { workspace, sessionId: r.sessionId };
      const entries: string[] = [];
      for (;;) {
        const page = await engine.read(key, entries.length, 1000);
        if (page.entries.length === 0) break;
        entries.push(...page.entries.map((e) => toJsonString(EntrySchema, e)));
      }
      out.push({
        workspace,
        sessionId: r.sessionId,
        headSeq: r.headSeq,
        leafId: r.leafId,
        messageCount: r.messageCount,
        health: r.health,
        entries,
      });
    }
  }
  return out;
}

/**
 * Expects `call` to be refused with `code`, its message containing every
 * one of `mentions`, and nothing stored: every session of every workspace
 * (no new one, none changed) is as before, and, for an engine with durable
 * storage, still so after a reopen (what a restarted server would read).
 * The reopen closes the engine the caller's store was built on, so this is
 * the last step of a test.
 */
export async function expectRefused(
  fixture: EngineFixture,
  call: () => Promise<unknown>,
  code: ErrorCode,
  ...mentions: string[]
): Promise<SessiondError> {
  const before = await storedSessions(fixture.engine);
  const err = await expectCode(call, code, ...mentions);
  expect(await storedSessions(fixture.engine)).toEqual(before);
  if (fixture.reopen !== undefined) {
    expect(await storedSessions(await fixture.reopen())).toEqual(before);
  }
  return err;
}
