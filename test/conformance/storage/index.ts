/**
 * The storage conformance suite: one set of tests that every StorageEngine
 * (memory, jsonl, postgres) must pass unchanged, one file per part of the
 * engine contract. An engine's test file calls
 *
 *   describeStorageConformance("jsonl", async () => ({ engine, reopen, cleanup }));
 *   describeCapabilityConformance("jsonl", async () => ({ engine, reopen, cleanup }));
 *
 * Factory contract:
 * - every call returns an engine on EMPTY storage (no sessions, no workspaces);
 * - `reopen` (optional) closes the current engine and opens a new one on the
 *   same storage; persistence checks run before and after it when given;
 * - `sibling` (optional) opens ANOTHER engine on the same storage while the
 *   current one stays open: a stand-in for a second process. Tests of what
 *   one instance sees of the other's changes run only when it is given;
 * - `cleanup` disposes of whatever engine is current at the end of the test
 *   (the one returned by the last `reopen`, if any), of every sibling and of
 *   the storage; it must tolerate those engines having been closed already.
 *
 * Everything asserted here is observable through the StorageEngine
 * interface; nothing depends on how an engine stores data.
 */
import { describe } from "vitest";
import { describeAppend } from "./append.js";
import { describeBlobs } from "./blobs.js";
import { describeClose } from "./close.js";
import { describeOptimisticConcurrency } from "./concurrency.js";
import { describeCreate } from "./create.js";
import { deleteManyTests, describeDelete } from "./delete.js";
import { describeEvents } from "./events.js";
import { type ConformanceFactory, conformanceSuite } from "./harness.js";
import { describeListing } from "./listing.js";
import { lookupTests } from "./lookups.js";
import { describeMoves } from "./moves.js";
import { pageRootsTests } from "./page-roots.js";
import { describePlannerErrors } from "./planner-errors.js";
import { describeRetries } from "./retries.js";
import { describeRoots } from "./roots.js";
import { describeUnknownSessions } from "./unknown-sessions.js";
import { describeWorkspaces } from "./workspaces.js";

export type { ConformanceFactory, ConformanceHarness } from "./harness.js";
export { expectedRootPage } from "./page-roots.js";

/** The tests every StorageEngine must pass, under "storage conformance: <name>". */
export function describeStorageConformance(name: string, factory: ConformanceFactory): void {
  describe(`storage conformance: ${name}`, () => {
    const suite = conformanceSuite(factory);
    describeCreate(suite);
    describeAppend(suite);
    describeOptimisticConcurrency(suite);
    describeRetries(suite);
    describeMoves(suite);
    describePlannerErrors(suite);
    describeListing(suite);
    describeWorkspaces(suite);
    describeRoots(suite);
    describeDelete(suite);
    describeEvents(suite);
    describeUnknownSessions(suite);
    describeClose(suite);
    describeBlobs(suite);
  });
}

/**
 * The optional capabilities of StorageEngine (`exists`, `idsByRef`,
 * `pageRoots`, `deleteMany`), for the engines that have them; a test of a
 * capability the engine lacks is skipped (or passes vacuously for
 * `exists` / `idsByRef`). Same factory contract as `describeStorageConformance`.
 */
export function describeCapabilityConformance(name: string, factory: ConformanceFactory): void {
  describe(`storage capabilities: ${name}`, () => {
    const suite = conformanceSuite(factory);
    lookupTests(suite);
    pageRootsTests(suite);
    deleteManyTests(suite);
  });
}
