import { readFileSync } from "node:fs";
import { join } from "node:path";
import { equals, type JsonObject, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  type Entry,
  EntrySchema,
  type Message,
  Role,
  type ToolCall,
} from "../../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../../gen/sessiond/v1/session_pb.js";
import { COMPACTION_PREFIX } from "../../core/fold.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../../store/session-store.js";
import { readJsonl } from "../jsonl-records.js";
import { mapClaudeFile, transcriptFileOf } from "./claude-project.js";
import { mapClaudeTranscript, ROOT_ID } from "./claude-transcript.js";

const PROJECT = join(
  import.meta.dirname,
  "../../../test/fixtures/importers/claude-code/-home-ana-shop",
);
const A = "5a1c9e3e-0000-4000-8000-00000000000a";
const B = "5a1c9e3e-0000-4000-8000-00000000000b";
const u = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
const read = (rel: string) => readFileSync(join(PROJECT, rel), "utf8");
const byId = (entries: Entry[], id: string) => entries.find((e) => e.id === id) as Entry;

/**
 * What Claude Code sends the model at a leaf, as its viewers document the
 * transcript: walk parentUuid from the leaf up to a record without parent
 * (the start, or a compact boundary), and take the user and assistant
 * messages in order. Flattened to content blocks with their role: Claude
 * Code's one user line of several tool results is several TOOL entries in
 * sessiond, and the compact summary message is the Compaction's summary.
 */
type Block = Record<string, unknown>;

function claudeContext(text: string, leaf: string): Block[] {
  const byUuid = new Map<string, JsonObject>();
  for (const r of readJsonl(text).records)
    if (typeof r.value.uuid === "string") byUuid.set(r.value.uuid, r.value);
  const chain: JsonObject[] = [];
  for (let r = byUuid.get(leaf); r !== undefined; r = byUuid.get(String(r.parentUuid)))
    chain.unshift(r);
  const out: Block[] = [];
  for (const r of chain) {
    if (r.type !== "user" && r.type !== "assistant") continue;
    const content = (r.message as JsonObject).content;
    const blocks =
      typeof content === "string" ? [{ type: "text", text: content }] : (content as JsonObject[]);
    for (const b of blocks) {
      if (b.type === "text") out.push({ [String(r.type)]: b.text });
      else if (b.type === "thinking") out.push({ thinking: b.thinking });
      else if (b.type === "tool_use") out.push({ call: b.id, name: b.name, input: b.input });
      else if (b.type === "tool_result") {
        const c = b.content;
        const text = typeof c === "string" ? c : (c as JsonObject[]).map((x) => x.text).join("");
        out.push({ result: b.tool_use_id, text, error: b.is_error === true });
      }
    }
  }
  return out;
}

function sessiondBlocks(messages: Message[]): Block[] {
  const out: Block[] = [];
  for (const m of messages) {
    for (const { part } of m.content) {
      if (part.case === "text") {
        if (m.role === Role.TOOL)
          out.push({ result: m.toolCallId, text: part.value, error: m.isError });
        else if (m.role === Role.USER)
          out.push({
            user: part.value.startsWith(COMPACTION_PREFIX)
              ? part.value.slice(COMPACTION_PREFIX.length)
              : part.value,
          });
        else out.push({ assistant: part.value });
      } else if (part.case === "thinking") out.push({ thinking: part.value.thinking });
      else if (part.case === "toolCall") {
        const call = part.value as ToolCall;
        out.push({
          call: call.id,
          name: call.name,
          input: call.arguments && toJson(ValueSchema, call.arguments),
        });
      }
    }
  }
  return out;
}

describe("a Claude Code transcript as a sessiond log", () => {
  const text = read(`${A}.jsonl`);
  const { session, sidechains } = mapClaudeTranscript(text, { sessionId: A });

  it("keeps the uuids, parents and timestamps; the title is the custom title, over a later summary", () => {
    expect(session.sessionId).toBe(A);
    expect(byId(session.entries, u(1)).parentId).toBe(ROOT_ID);
    expect(byId(session.entries, u(3)).parentId).toBe(u(2));
    expect(byId(session.entries, u(10)).parentId).toBe(u(4));
    expect(session.entries[0]?.kind.value).toMatchObject({
      title: "Cart and checkout",
      cwd: "/home/ana/shop",
    });
    expect(byId(session.entries, u(1)).timestamp).toEqual(
      expect.objectContaining({ seconds: BigInt(Date.UTC(2026, 1, 3, 14, 0, 0) / 1000) }),
    );
  });

  it("one user line of two tool results and a text is two TOOL entries and a USER entry, the last keeping the uuid", () => {
    const ids = [`${u(6)}-1`, `${u(6)}-2`, u(6)];
    const pieces = ids.map((id) => byId(session.entries, id));
    expect(pieces.map((e) => (e.kind.value as Message).role)).toEqual([
      Role.TOOL,
      Role.TOOL,
      Role.USER,
    ]);
    expect(pieces.map((e) => e.parentId)).toEqual([u(5), ids[0], ids[1]]);
    expect((byId(session.entries, ids[1] as string).kind.value as Message).isError).toBe(true);
    expect(byId(session.entries, u(7)).parentId).toBe(u(6));
  });

  it("a compact boundary is a Compaction under its logical parent, with the summary message's text", () => {
    const c = byId(session.entries, u(11));
    expect(c.parentId).toBe(u(9));
    expect(c.kind).toMatchObject({
      case: "compaction",
      value: {
        summary: expect.stringContaining("a cart endpoint was added"),
        tokensBefore: 154000n,
      },
    });
    expect(byId(session.entries, u(12)).kind).toMatchObject({
      case: "custom",
      value: { namespace: "claude-code.compact-summary" },
    });
  });

  it("system lines are Custom entries; lines without uuid and a torn line are noted by number", () => {
    expect(byId(session.entries, u(8)).kind).toMatchObject({
      case: "custom",
      value: { namespace: "claude-code.system.stop_hook_summary" },
    });
    expect(session.notes).toEqual([
      { line: 17, reason: expect.stringContaining("not JSON") },
      { line: 5, reason: expect.stringContaining('"file-history-snapshot" line has no uuid') },
    ]);
  });

  it("the inline sidechain is a subagent session of the transcript's session", () => {
    expect(sidechains).toHaveLength(1);
    const [side] = sidechains;
    expect(side?.sessionId).toBe(`sc-00000000-${A}`);
    expect(side?.entries[0]?.kind.value).toMatchObject({ parentSessionId: A });
    expect(side?.entries.map((e) => e.id)).toEqual([ROOT_ID, u(20), u(21)]);
    expect(session.entries.some((e) => e.id === u(20))).toBe(false);
  });

  it("the CONTEXT at every leaf is the chain Claude Code would send from there", async () => {
    const store = new SessionStore(new MemoryEngine());
    const { session: meta } = await store.import(undefined, session.entries);
    expect(meta.leafId).toBe(u(14));
    const s = await store.open(undefined, A);
    for (const leaf of [u(9), u(10), u(14)]) {
      const state = await s.state({ atEntryId: leaf, view: View.CONTEXT });
      const ours = sessiondBlocks(state.messages.map((m) => m.message as Message));
      expect(ours, `at ${leaf}`).toEqual(claudeContext(text, leaf));
    }
  });

  it("the summary line's text is kept in the root's metadata when the custom title wins", () => {
    expect(session.entries[0]?.kind.value).toMatchObject({
      title: "Cart and checkout",
      metadata: { claudeCode: { summary: "A generated title" } },
    });
  });

  it("a TOOL entry names the tool its call named", () => {
    const calls = new Map<string, string>();
    for (const e of session.entries) {
      const m = e.kind.case === "message" ? e.kind.value : undefined;
      for (const p of m?.content ?? []) {
        if (p.part.case === "toolCall") calls.set(p.part.value.id, p.part.value.name);
      }
    }
    const results = session.entries.flatMap((e) =>
      e.kind.case === "message" && e.kind.value.role === Role.TOOL ? [e.kind.value] : [],
    );
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(r.toolName, r.toolCallId).toBe(calls.get(r.toolCallId ?? ""));
      expect(r.toolName).not.toBe("");
    }
  });

  it("mapping the same file twice gives the same log: a repeated import is idempotent", () => {
    const again = mapClaudeTranscript(text, { sessionId: A }).session.entries;
    expect(again.every((e, i) => equals(EntrySchema, e, session.entries[i] as Entry))).toBe(true);
  });
});

describe("lines without a place in the conversation", () => {
  it("are noted once per type, with their lines, so other notes stay visible", () => {
    const snapshot = JSON.stringify({ type: "file-history-snapshot", messageId: "m" });
    const text = [snapshot, JSON.stringify({ type: "queue-operation" }), snapshot].join("\n");
    const { session } = mapClaudeTranscript(text, { sessionId: "s" });
    expect(session.notes).toEqual([
      {
        line: 1,
        reason: expect.stringMatching(/^2 "file-history-snapshot" lines \(1, 3\) have no uuid/),
      },
      { line: 2, reason: expect.stringMatching(/^a "queue-operation" line has no uuid/) },
    ]);
  });
});

describe("the session ids of subagents and inline sidechains", () => {
  const line = (uuid: string, parentUuid: string | null, isSidechain: boolean) =>
    JSON.stringify({
      uuid,
      parentUuid,
      isSidechain,
      type: "user",
      message: { role: "user", content: uuid },
      timestamp: "2026-02-03T14:00:00Z",
    });
  const idsOf = (...lines: string[]) =>
    mapClaudeTranscript(lines.join("\n"), { sessionId: "s" }).sidechains.map((c) => c.sessionId);

  it("are sc-<first 8 of the first uuid>-<session> for Claude Code's uuids", () => {
    const first = "0b7e3f9a-1111-4c2d-9e8f-000000000001";
    expect(idsOf(line("m1", null, false), line(first, "m1", true))).toEqual(["sc-0b7e3f9a-s"]);
  });

  it("hash the uuid when two sidechains share the 8, or the 8 make no valid id", () => {
    const ids = idsOf(
      line("m1", null, false),
      line("0b7e3f9a-aaaa", "m1", true),
      line("0b7e3f9a-bbbb", "m1", true),
      line("../x", "m1", true),
    );
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^sc-[0-9a-f]{16}-s$/);
  });

  it("a subagent is agent-<id>-<session>, or a hash when that is longer than an id may be", () => {
    const idOf = (parent: string) => {
      const file = transcriptFileOf(`${parent}/subagents/agent-a1b2.jsonl`);
      if (file === undefined) throw new Error("not a transcript name");
      const [mapped] = mapClaudeFile(file, line("m1", null, false)).sessions;
      return mapped?.sessionId;
    };
    expect(idOf("s1")).toBe("agent-a1b2-s1");
    const long = "p".repeat(128);
    expect(idOf(long)).toMatch(/^agent-[0-9a-f]{32}$/);
    expect(idOf(long)).toBe(idOf(long));
  });
});

describe("a short id prefix of an imported session", () => {
  it("is not ambiguous with the session's own subagent and sidechain sessions", async () => {
    const store = new SessionStore(new MemoryEngine());
    const files = [`${A}.jsonl`, "agent-ffeeddc.jsonl"];
    const ids: string[] = [];
    for (const rel of files) {
      for (const s of mapClaudeFile(transcriptFileOf(rel) as never, read(rel)).sessions) {
        ids.push((await store.import(undefined, s.entries)).session.id);
      }
    }
    expect(ids).toHaveLength(3);
    expect((await store.resolve(undefined, A.slice(0, 8))).sessionId).toBe(A);
  });
});

describe("the files of a Claude Code project directory", () => {
  it("sessions, subagents in <session>/subagents/ and older agent-*.jsonl beside them", () => {
    expect(transcriptFileOf(`${A}.jsonl`)).toEqual({ kind: "session", sessionId: A });
    expect(transcriptFileOf(`${B}/subagents/agent-a1b2c3d.jsonl`)).toEqual({
      kind: "subagent",
      agentId: "a1b2c3d",
      parentSessionId: B,
    });
    expect(transcriptFileOf("agent-ffeeddc.jsonl")).toEqual({
      kind: "subagent",
      agentId: "ffeeddc",
      parentSessionId: undefined,
    });
    expect(transcriptFileOf("sessions-index.json")).toBeUndefined();
    expect(transcriptFileOf(`${B}/tool-results/x.jsonl`)).toBeUndefined();
  });

  it("subagent transcripts import as subagent sessions of their session, after it, with the type its Task call named", async () => {
    const store = new SessionStore(new MemoryEngine());
    const files = [
      `${A}.jsonl`,
      `${B}.jsonl`,
      `${B}/subagents/agent-a1b2c3d.jsonl`,
      "agent-ffeeddc.jsonl",
    ];
    const ids: string[] = [];
    const agentTypes = new Map<string, string>();
    for (const rel of files) {
      const mapped = mapClaudeFile(transcriptFileOf(rel) as never, read(rel), agentTypes);
      for (const [id, type] of mapped.agentTypes) agentTypes.set(id, type);
      for (const s of mapped.sessions) {
        const { session } = await store.import(undefined, s.entries);
        ids.push(session.id);
        if (session.parentSessionId !== undefined) expect(session.spawnDepth).toBe(1);
      }
    }
    expect(ids).toEqual([A, `sc-00000000-${A}`, B, `agent-a1b2c3d-${B}`, `agent-ffeeddc-${A}`]);
    // The Task call of B named the type; its result the agent id.
    expect((await store.get(undefined, `agent-a1b2c3d-${B}`)).agentType).toBe("Explore");
    expect((await store.get(undefined, `agent-ffeeddc-${A}`)).agentType).toBeUndefined();
    const b = await store.get(undefined, B);
    expect(b.title).toBe("Repo tour");
  });
});
