import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../../gen/sessiond/v1/entry_pb.js";
import { FORMAT_VERSION } from "../../core/entry.js";
import type { EntryInit } from "../../core/entry-builders.js";
import {
  type JsonRecord,
  obj,
  parentsFirst,
  readJsonl,
  str,
  textOf,
  timestampOf,
  without,
} from "../jsonl-records.js";
import { customEntry, type ImportNote, LogBuilder, type MappedSession } from "../mapped-session.js";
import { assistantEntry, textOfContent, toolNamesOf, userPieces } from "./claude-content.js";
import { sidechainId } from "./session-ids.js";

/** Which session a transcript becomes. */
export interface TranscriptTarget {
  sessionId: string;
  /** For a subagent transcript: the session that spawned it. */
  parentSessionId?: string | undefined;
  agentType?: string | undefined;
}

/** The id of every mapped session's SessionInfo root (Claude Code's uuids never collide with it). */
export const ROOT_ID = "root";

/**
 * A Claude Code transcript (one JSONL file of ~/.claude/projects/<project>/)
 * as sessiond logs: the conversation of the file, and each sidechain an
 * older Claude Code wrote inline (isSidechain, a subagent's turns) as a
 * subagent session of it (`sc-<first uuid>-<session>`). See README.md.
 */
export function mapClaudeTranscript(
  text: string,
  target: TranscriptTarget,
): { session: MappedSession; sidechains: MappedSession[] } {
  const { records, notes } = readJsonl(text);
  const tree: JsonRecord[] = [];
  const skipped = new Map<string, number[]>();
  const titles: Titles = {};
  for (const r of records) {
    if (typeof r.value.uuid === "string") tree.push(r);
    else if (r.value.type === "custom-title")
      titles.customTitle = str(r.value, "customTitle") ?? titles.customTitle;
    else if (r.value.type === "summary" || r.value.type === "ai-title") {
      const field = r.value.type === "summary" ? "summary" : "aiTitle";
      titles[field] = str(r.value, field) ?? titles[field];
      titles.generated = str(r.value, field) ?? titles.generated;
    } else {
      const type = JSON.stringify(r.value.type ?? null);
      skipped.set(type, [...(skipped.get(type) ?? []), r.line]);
    }
  }
  // One note per kind of line: a project has a file-history snapshot per turn,
  // and a note each would bury the notes that matter.
  for (const [type, lines] of skipped) {
    const shown = lines.slice(0, 5).join(", ") + (lines.length > 5 ? ", …" : "");
    const what =
      lines.length === 1 ? `a ${type} line has` : `${lines.length} ${type} lines (${shown}) have`;
    notes.push({
      line: lines[0] as number,
      reason: `${what} no uuid, so no place in the conversation: skipped`,
    });
  }
  const inline = target.parentSessionId === undefined ? sidechainGroups(tree) : new Map();
  const main = tree.filter((r) => !inline.has(r));
  const session = buildSession(main, target, titles, notes);
  const groups = new Map<string, JsonRecord[]>();
  for (const [r, root] of inline) groups.set(root, [...(groups.get(root) ?? []), r]);
  const prefixes = [...groups.keys()].map((root) => root.slice(0, 8));
  const sidechains = [...groups].map(([root, group]) =>
    buildSession(
      group,
      {
        sessionId: sidechainId(target.sessionId, root, prefixes),
        parentSessionId: target.sessionId,
      },
      {},
      [],
    ),
  );
  return { session, sidechains };
}

/**
 * The title lines of a transcript, the last of each kind. The user's own
 * title wins over generated ones, as in Claude Code's session list; the
 * others stay in the root's metadata (`claudeCode`), so no summary is lost.
 */
interface Titles {
  customTitle?: string | undefined;
  summary?: string | undefined;
  aiTitle?: string | undefined;
  /** The last summary or AI title. */
  generated?: string | undefined;
}

/** Inline sidechain records, each with the uuid of its sidechain's first record. */
function sidechainGroups(tree: JsonRecord[]): Map<JsonRecord, string> {
  const side = new Map<string, JsonRecord>();
  for (const r of tree) if (r.value.isSidechain === true) side.set(r.value.uuid as string, r);
  const out = new Map<JsonRecord, string>();
  for (const r of side.values()) {
    let root = r;
    const seen = new Set<JsonRecord>();
    for (
      let p = side.get(textOf(root.value.parentUuid));
      p !== undefined && !seen.has(p);
      p = side.get(textOf(p.value.parentUuid))
    ) {
      seen.add(root);
      root = p;
    }
    out.set(r, root.value.uuid as string);
  }
  return out;
}

function buildSession(
  records: JsonRecord[],
  target: TranscriptTarget,
  titles: Titles,
  notes: ImportNote[],
): MappedSession {
  const first = records[0]?.value;
  const timestamp = timestampOf(first?.timestamp);
  const root = create(EntrySchema, {
    id: ROOT_ID,
    timestamp,
    kind: {
      case: "sessionInfo",
      value: {
        sessionId: target.sessionId,
        title: titles.customTitle ?? titles.generated,
        cwd: str(first, "cwd"),
        createdAt: timestamp,
        formatVersion: FORMAT_VERSION,
        parentSessionId: target.parentSessionId,
        agentType: target.agentType,
        metadata: {
          claudeCode: {
            version: first?.version ?? null,
            gitBranch: first?.gitBranch ?? null,
            ...(titles.summary !== undefined ? { summary: titles.summary } : {}),
            ...(titles.aiTitle !== undefined ? { aiTitle: titles.aiTitle } : {}),
          },
        },
      },
    },
  });
  const log = new LogBuilder(target.sessionId, root);
  log.notes.push(...notes);
  const uuids = new Set(records.map((r) => r.value.uuid as string));
  const compacted = new Set<string>();
  const toolNames = toolNamesOf(records.map((r) => obj(r.value, "message")));
  const ordered = parentsFirst(
    records,
    (r) => str(r.value, "uuid"),
    (r) => str(r.value, "parentUuid") ?? str(r.value, "logicalParentUuid"),
  );
  for (const r of ordered) {
    const parent = str(r.value, "parentUuid");
    // A sidechain's first record names the main-chain message that started it, or nothing.
    const parentId =
      parent !== undefined && (uuids.has(parent) || target.parentSessionId === undefined)
        ? parent
        : ROOT_ID;
    addRecord(log, r, parentId, records, compacted, toolNames);
  }
  return log.finish();
}

/** Claude Code's fields besides the message: kept as metadata "claudeCode". */
const extras = (r: JsonObject) => without(r, "message", "uuid", "parentUuid", "timestamp", "type");

function addRecord(
  log: LogBuilder,
  { line, value: r }: JsonRecord,
  parentId: string,
  records: JsonRecord[],
  compacted: Set<string>,
  toolNames: ReadonlyMap<string, string>,
): void {
  const uuid = r.uuid as string;
  const timestamp = timestampOf(r.timestamp);
  const problems: string[] = [];
  const place = (init: EntryInit, id: string, parent: string): Entry =>
    create(EntrySchema, { ...init, id, parentId: parent, timestamp });
  const keep =
    (namespace = `claude-code.${textOf(r.type)}`) =>
    () => {
      const c = customEntry(uuid, timestamp, namespace, r);
      c.parentId = parentId;
      return c;
    };
  const message = obj(r, "message") ?? {};
  if (r.type === "user" && r.isCompactSummary === true && compacted.has(parentId)) {
    // Its text is the Compaction's summary already.
    log.add(keep("claude-code.compact-summary")(), line);
  } else if (r.type === "user") {
    const pieces = userPieces(message, problems, toolNames);
    let parent = parentId;
    pieces.forEach((init, i) => {
      const last = i === pieces.length - 1;
      const id = last ? uuid : `${uuid}-${i + 1}`;
      const entry = place(init, id, parent);
      if (last && entry.kind.case === "message")
        entry.kind.value.metadata = { claudeCode: extras(r) };
      log.add(entry, line, last ? keep() : undefined);
      parent = id;
    });
  } else if (r.type === "assistant") {
    const entry = place(assistantEntry(message, problems), uuid, parentId);
    if (entry.kind.case === "message") {
      entry.kind.value.metadata = {
        claudeCode: { ...extras(r), message: without(message, "content", "role") },
      };
    }
    log.add(entry, line, keep());
  } else if (r.type === "system" && r.subtype === "compact_boundary") {
    addBoundary(log, line, r, records, compacted, keep("claude-code.compact_boundary"));
  } else {
    const namespace = `claude-code.${textOf(r.type)}${typeof r.subtype === "string" ? `.${r.subtype}` : ""}`;
    log.add(keep(namespace)(), line);
  }
  for (const p of problems) log.note(line, uuid, p);
}

/**
 * A compact boundary: Claude Code starts a new chain there (parentUuid
 * null) and resumes with the summary message below it, so the context is
 * the summary and what follows. Here it is a Compaction under its logical
 * parent, replacing every message of that path, with the summary message's
 * text as its summary; without a logical parent in the file it stays a
 * Custom entry and the summary message a USER message, which is the same
 * context.
 */
function addBoundary(
  log: LogBuilder,
  line: number,
  r: JsonObject,
  records: JsonRecord[],
  compacted: Set<string>,
  keep: () => Entry,
): void {
  const uuid = r.uuid as string;
  const logical = str(r, "logicalParentUuid");
  const meta = obj(r, "compactMetadata");
  if (meta?.preservedSegment !== undefined || meta?.preservedMessages !== undefined) {
    log.note(
      line,
      uuid,
      "the messages this compaction preserved are not relinked: they stay where they are in the tree",
    );
  }
  if (logical === undefined || !log.has(logical)) {
    log.add(keep(), line);
    return;
  }
  const summary = records.find(
    (s) => s.value.parentUuid === uuid && s.value.isCompactSummary === true,
  );
  if (summary === undefined)
    log.note(line, uuid, "a compact boundary without its summary message: the summary is empty");
  const replaces = log
    .path(logical)
    .filter(
      (e) =>
        e.kind.case === "message" ||
        e.kind.case === "compaction" ||
        e.kind.case === "branchSummary",
    )
    .map((e) => e.id);
  const preTokens = meta?.preTokens;
  const entry = create(EntrySchema, {
    id: uuid,
    parentId: logical,
    timestamp: timestampOf(r.timestamp),
    kind: {
      case: "compaction",
      value: {
        summary: textOfContent(obj(summary?.value, "message")),
        replacesEntryIds: replaces,
        tokensBefore:
          typeof preTokens === "number" ? BigInt(Math.max(0, Math.trunc(preTokens))) : undefined,
      },
    },
  });
  log.add(entry, line, keep);
  if (log.kindOf(uuid) === "compaction") compacted.add(uuid);
}
