import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  buildSessionContext,
  convertToLlm,
  migrateSessionEntries,
  parseSessionEntries,
  type SessionEntry,
} from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { type Message, Role, type ToolCall } from "../../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../../gen/sessiond/v1/session_pb.js";
import { BRANCH_SUMMARY_PREFIX, COMPACTION_PREFIX } from "../../core/fold.js";
import { MemoryEngine } from "../../storage/memory.js";
import { SessionStore } from "../../store/session-store.js";
import { readJsonl } from "../jsonl-records.js";
import { migratePiRecords } from "./pi-migrate.js";
import { mapPiSession } from "./pi-session.js";

const FIXTURES = join(import.meta.dirname, "../../../test/fixtures/importers/pi");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

/**
 * One message as the model gets it, in a form both tools can be brought
 * to. The mappings: pi's compaction and branch summaries reach the model
 * wrapped in pi's words (COMPACTION_SUMMARY_PREFIX ... </summary>),
 * sessiond's in its own ("Previous conversation summary:\n"): both become
 * { summary, text }. Empty text parts (pi's "" content) are left out, and a
 * thinking part is compared by its text.
 */
type Normal = { role: string; summary?: string; parts: unknown[]; toolCallId?: string };

const PI_SUMMARY = [
  /^The conversation history before this point was compacted into the following summary:\n\n<summary>\n([\s\S]*)\n<\/summary>$/,
  /^The following is a summary of a branch that this conversation came back from:\n\n<summary>\n([\s\S]*)<\/summary>$/,
];

// biome-ignore lint/suspicious/noExplicitAny: pi's LLM message union, read field by field
function fromPi(m: any): Normal {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
  const text = content.length === 1 && content[0].type === "text" ? content[0].text : undefined;
  for (const [i, re] of PI_SUMMARY.entries()) {
    const hit = m.role === "user" && text !== undefined ? re.exec(text) : null;
    if (hit) return { role: "user", summary: i === 0 ? "compaction" : "branch", parts: [hit[1]] };
  }
  const parts = content
    // biome-ignore lint/suspicious/noExplicitAny: as above
    .filter((b: any) => !(b.type === "text" && b.text === ""))
    // biome-ignore lint/suspicious/noExplicitAny: as above
    .map((b: any) => {
      if (b.type === "text") return { text: b.text };
      if (b.type === "thinking") return { thinking: b.thinking };
      if (b.type === "image") return { image: b.mimeType, data: b.data };
      return { call: b.id, name: b.name, args: b.arguments };
    });
  const role = m.role === "toolResult" ? "tool" : m.role;
  return m.role === "toolResult" ? { role, parts, toolCallId: m.toolCallId } : { role, parts };
}

function fromSessiond(m: Message): Normal {
  const role = m.role === Role.USER ? "user" : m.role === Role.ASSISTANT ? "assistant" : "tool";
  const first = m.content[0]?.part;
  if (m.role === Role.USER && m.content.length === 1 && first?.case === "text") {
    for (const [summary, prefix] of [
      ["compaction", COMPACTION_PREFIX],
      ["branch", BRANCH_SUMMARY_PREFIX],
    ] as const) {
      if (first.value.startsWith(prefix)) {
        return { role, summary, parts: [first.value.slice(prefix.length)] };
      }
    }
  }
  const parts = m.content
    .filter((p) => !(p.part.case === "text" && p.part.value === ""))
    .map(({ part }) => {
      if (part.case === "text") return { text: part.value };
      if (part.case === "thinking") return { thinking: part.value.thinking };
      if (part.case === "image") {
        return {
          image: part.value.mimeType,
          data: Buffer.from(part.value.data).toString("base64"),
        };
      }
      const call = part.value as ToolCall;
      return {
        call: call.id,
        name: call.name,
        args: call.arguments && toJson(ValueSchema, call.arguments),
      };
    });
  return m.role === Role.TOOL ? { role, parts, toolCallId: m.toolCallId } : { role, parts };
}

/** pi's entries (header left out) and, in the same order, the ids the importer gives them. */
function piEntries(text: string): { entries: SessionEntry[]; ids: string[] } {
  const all = parseSessionEntries(text);
  migrateSessionEntries(all);
  const { records } = readJsonl(text);
  migratePiRecords(records);
  const ids = records.slice(1).map((r) => String(r.value.id));
  return { entries: all.slice(1) as SessionEntry[], ids };
}

/** The leaves of pi's tree: entries no other entry names as parent. */
function leaves(entries: SessionEntry[]): number[] {
  const parents = new Set(entries.map((e) => e.parentId));
  return entries.flatMap((e, i) => (parents.has(e.id) ? [] : [i]));
}

async function expectSameContextAtEveryLeaf(name: string): Promise<number> {
  const text = fixture(name);
  const mapped = mapPiSession(text);
  const store = new SessionStore(new MemoryEngine());
  await store.import(undefined, mapped.entries);
  const session = await store.open(undefined, mapped.sessionId);
  const { entries, ids } = piEntries(text);
  const ends = leaves(entries);
  for (const i of ends) {
    const pi = buildSessionContext(entries, entries[i]?.id);
    const state = await session.state({ atEntryId: ids[i], view: View.CONTEXT });
    const ours = state.messages.map((m) => fromSessiond(m.message as Message));
    expect(ours, `${name} at leaf ${ids[i]}`).toEqual(convertToLlm(pi.messages).map(fromPi));
    expect(state.thinkingLevel ?? "off", `${name} at leaf ${ids[i]}`).toBe(pi.thinkingLevel);
  }
  return ends.length;
}

describe("pi sessions imported: the CONTEXT is what pi's buildSessionContext gives, at every leaf", () => {
  it("a v3 file with branches, two compactions, a branch summary, labels, bash runs and a lost parent", async () => {
    expect(await expectSameContextAtEveryLeaf("v3-branches.jsonl")).toBe(3);
  });

  it("a v2 file, whose custom messages are still called hookMessage", async () => {
    expect(await expectSameContextAtEveryLeaf("v2-hook-message.jsonl")).toBe(2);
  });

  it("a v1 file: linear, without ids, its compaction naming the first kept entry by index", async () => {
    expect(await expectSameContextAtEveryLeaf("v1-linear.jsonl")).toBe(1);
  });
});
