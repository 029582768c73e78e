import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MemoryEngine } from "../storage/memory.js";
import { SessionStore } from "../store/session-store.js";
import { mapClaudeTranscript } from "./claude-code/claude-transcript.js";
import { mapPiSession } from "./pi/pi-session.js";

/**
 * Files as a damaged or hostile source can hold them: the fields the
 * importers read, with any JSON in them, including objects whose own
 * `toString` is no function (String() throws on those). Whatever the
 * lines, mapping returns a log, and the log imports without refusal.
 */
const hostile = fc.oneof(
  fc.jsonValue(),
  fc.constant({ toString: false }),
  fc.constant({ valueOf: null, toString: 1 }),
);
const field = <K extends string>(keys: K[], good: fc.Arbitrary<unknown>) =>
  fc.dictionary(fc.constantFrom(...keys), fc.oneof(good, hostile), { maxKeys: keys.length });

const id = fc.constantFrom("a", "b", "c");
const claudeLine = fc
  .tuple(
    field(["uuid", "parentUuid", "logicalParentUuid"], id),
    field(["type"], fc.constantFrom("user", "assistant", "system", "summary", "custom-title")),
    field(["isSidechain", "isCompactSummary"], fc.boolean()),
    field(["subtype", "timestamp", "summary", "customTitle"], fc.string()),
    field(
      ["message"],
      fc.record({
        role: fc.oneof(fc.constantFrom("user", "assistant"), hostile),
        content: fc.oneof(
          fc.string(),
          fc.array(
            field(["type", "id", "name", "input", "text", "tool_use_id", "content"], hostile),
          ),
          hostile,
        ),
      }),
    ),
  )
  .map((parts) => JSON.stringify(Object.assign({}, ...parts)));

const piLine = fc
  .tuple(
    field(["id", "parentId"], id),
    field(["type"], fc.constantFrom("message", "compaction", "branch_summary", "model_change")),
    field(["timestamp", "summary", "firstKeptEntryId", "fromId"], fc.string()),
    field(
      ["message"],
      fc.record({
        role: fc.oneof(fc.constantFrom("user", "assistant", "toolResult"), hostile),
        content: fc.oneof(
          fc.string(),
          fc.array(field(["type", "text", "name", "id", "arguments", "thinking"], hostile)),
          hostile,
        ),
      }),
    ),
  )
  .map((parts) => JSON.stringify(Object.assign({}, ...parts)));

/** Imports the logs in order (a sidechain after its parent); each one's entry count. */
async function imports(...logs: Parameters<SessionStore["import"]>[1][]): Promise<number[]> {
  const store = new SessionStore(new MemoryEngine());
  const counts: number[] = [];
  for (const entries of logs) {
    counts.push(Number((await store.import(undefined, entries)).session.entryCount));
  }
  return counts;
}

describe("importers read any JSON without throwing, and what they map imports", () => {
  test("Claude Code transcripts", async () => {
    let mapped = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(claudeLine, { maxLength: 6 }), async (lines) => {
        const { session, sidechains } = mapClaudeTranscript(lines.join("\n"), { sessionId: "s" });
        const logs = [session, ...sidechains].map((m) => m.entries);
        expect(await imports(...logs)).toEqual(logs.map((l) => l.length));
        mapped += logs.reduce((n, l) => n + l.length - 1, 0);
      }),
      { numRuns: 300 },
    );
    // Not only empty logs: lines with a place in the conversation were mapped.
    expect(mapped).toBeGreaterThan(100);
  });

  test("pi sessions", async () => {
    const header = JSON.stringify({ type: "session", version: 3, id: "p", cwd: "/" });
    let mapped = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piLine, { maxLength: 6 }), async (lines) => {
        const log = mapPiSession([header, ...lines].join("\n"));
        expect(await imports(log.entries)).toEqual([log.entries.length]);
        mapped += log.entries.length - 1;
      }),
      { numRuns: 300 },
    );
    expect(mapped).toBeGreaterThan(100);
  });
});
