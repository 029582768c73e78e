/**
 * Benchmark data written straight to disk with the JSONL engine's own
 * encoder (no API round trips): big bushy sessions (rows 4, 5), linear
 * sessions (row 9) and many small sessions (row 6). Every generator works
 * on a "logical" conversation (ids, parents, roles, texts, times) so that
 * bench/lib/pi-data.ts can write the very same conversation in pi's format.
 */
import { closeSync, mkdirSync, openSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type Entry,
  EntrySchema,
  type MessageSchema,
  Role,
} from "../../gen/sessiond/v1/entry_pb.js";
import { encodeRecords } from "../../src/storage/jsonl/record.js";

/** One entry of a generated conversation, format-neutral. */
export interface LogicalEntry {
  /** 8 hex digits, unique inside the session (pi's id shape; valid for sessiond). */
  id: string;
  /** Undefined only for the first message, which hangs off the root. */
  parentId: string | undefined;
  /** A message, or (bushy trees only) a rewind back onto the main path. */
  kind: "user" | "assistant" | "leaf";
  /** Message text; for a leaf entry the id it moves the pointer to. */
  text: string;
  timeMs: number;
}

export interface Conversation {
  sessionId: string;
  createdMs: number;
  cwd: string;
  /** Id of the root (sessiond's SessionInfo entry; pi writes its header instead). */
  rootId: string;
  /** In file order; parents always precede children. */
  entries: LogicalEntry[];
  /** Entries of the current path, root included. */
  pathLength: number;
  /** Tags of the root SessionInfo (scenario 11's filters). */
  tags?: Record<string, string>;
}

export const BENCH_CWD = "/home/dev/project";
export const MODEL = "claude-sonnet-4-5";
export const PROVIDER = "anthropic";

/** Unique 8-hex ids: n × an odd constant is a bijection modulo 2^32. */
export function hexId(n: number): string {
  return (Math.imul(n + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, "0");
}

/** sessiond's id shape (YYYYMMDD-HHMMSS-<8 hex>, UTC), deterministic. */
export function sessionIdAt(ms: number, n: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}-${hexId(n)}`;
}

const WORDS = (
  "the session store keeps every entry of an agent conversation in an append only log " +
  "tool call result assistant user message context window compaction summary branch " +
  "rewind label model provider usage tokens file path function returns value error " +
  "const let await async import export interface type class method property array map " +
  "refactor test passes fails build lint format commit review change diff patch line"
).split(" ");

/** A pool of distinct texts of about `length` characters (picked per entry, with a unique prefix). */
function textPool(length: number, count = 257): string[] {
  let seed = 12345;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  const pool: string[] = [];
  for (let i = 0; i < count; i++) {
    let t = "";
    while (t.length < length) t += `${WORDS[next() % WORDS.length]} `;
    pool.push(t.slice(0, length));
  }
  return pool;
}

const pools = new Map<number, string[]>();
const poolOf = (length: number) => {
  let p = pools.get(length);
  if (p === undefined) {
    p = textPool(length);
    pools.set(length, p);
  }
  return p;
};

/** Message texts: assistant turns a bit shorter than user turns (they carry usage too). */
function texts(textBytes: number) {
  const user = poolOf(textBytes);
  const assistant = poolOf(Math.max(16, textBytes - 120));
  return (kind: "user" | "assistant", i: number) =>
    `#${i} ${(kind === "user" ? user : assistant)[i % user.length]}`;
}

/**
 * A bushy tree: a main path of `pathLength` entries (root included) and
 * side branches hanging off it. After main entry k (k = 1 … pathLength-2)
 * comes an abandoned side chain whose first entry is a sibling of main
 * entry k+1, then a Leaf entry rewinding to main entry k (what Rewind
 * writes), then main entry k+1. The file ends with the last main entry, so
 * the current path is exactly the main path. With pathLength = entries the
 * conversation is linear.
 */
export function conversation(o: {
  sessionId: string;
  createdMs: number;
  /** Every line of the file, root included. */
  entries: number;
  pathLength: number;
  /** Characters of message text (~700 gives ~900-byte lines). */
  textBytes: number;
  /** First id number (ids are unique across sessions generated together when spaced). */
  idBase?: number;
}): Conversation {
  const { entries: total, pathLength } = o;
  if (pathLength < 2 || pathLength > total) throw new Error("pathLength must be in [2, entries]");
  const text = texts(o.textBytes);
  const base = o.idBase ?? 0;
  let n = 0;
  const rootId = hexId(base + n++);
  const out: LogicalEntry[] = [];
  let time = o.createdMs;
  const push = (parentId: string | undefined, kind: LogicalEntry["kind"], body?: string) => {
    const id = hexId(base + n++);
    time += 1000;
    out.push({ id, parentId, kind, text: body ?? text(kind as "user", n), timeMs: time });
    return id;
  };
  const sideChains = total === pathLength ? 0 : pathLength - 2;
  const sideEntries = total - pathLength - sideChains; // a Leaf entry closes every side chain
  if (sideChains > 0 && sideEntries < sideChains) {
    throw new Error("too few entries for a side chain off every main entry");
  }
  let mainId: string | undefined;
  for (let k = 1; k < pathLength; k++) {
    const role = k % 2 === 1 ? "user" : "assistant";
    mainId = push(mainId, role);
    if (k <= sideChains) {
      const len = Math.floor(sideEntries / sideChains) + (k <= sideEntries % sideChains ? 1 : 0);
      let parent = mainId;
      for (let j = 0; j < len; j++) {
        parent = push(parent, (k + 1 + j) % 2 === 1 ? "user" : "assistant");
      }
      push(parent, "leaf", mainId);
    }
  }
  if (out.length + 1 !== total) throw new Error(`generated ${out.length + 1} of ${total} entries`);
  return {
    sessionId: o.sessionId,
    createdMs: o.createdMs,
    cwd: BENCH_CWD,
    rootId,
    entries: out,
    pathLength,
  };
}

/** The sessiond Message of a logical message entry (what an agent would append). */
export function messageOf(e: LogicalEntry, seq: number): MessageInitShape<typeof MessageSchema> {
  if (e.kind === "user") {
    return { role: Role.USER, content: [{ part: { case: "text", value: e.text } }] };
  }
  return {
    role: Role.ASSISTANT,
    content: [{ part: { case: "text", value: e.text } }],
    model: MODEL,
    provider: PROVIDER,
    usage: { inputTokens: BigInt(12000 + seq), outputTokens: 350n, cacheReadTokens: 11000n },
    stopReason: "stop",
  };
}

/** The sessiond Entry of a logical entry (seq = its line number). */
export function toEntry(c: Conversation, e: LogicalEntry, seq: number): Entry {
  const parentId = e.parentId ?? c.rootId;
  const timestamp = timestampFromMs(e.timeMs);
  if (e.kind === "leaf") {
    return create(EntrySchema, {
      id: e.id,
      parentId,
      timestamp,
      seq: BigInt(seq),
      kind: { case: "leaf", value: { leafId: e.text } },
    });
  }
  return create(EntrySchema, {
    id: e.id,
    parentId,
    timestamp,
    seq: BigInt(seq),
    kind: { case: "message", value: messageOf(e, seq) },
  });
}

export function rootEntry(c: Conversation): Entry {
  const createdAt = timestampFromMs(c.createdMs);
  return create(EntrySchema, {
    id: c.rootId,
    seq: 1n,
    timestamp: createdAt,
    kind: {
      case: "sessionInfo",
      value: {
        sessionId: c.sessionId,
        cwd: c.cwd,
        createdAt,
        formatVersion: 1,
        tags: c.tags ?? {},
      },
    },
  });
}

/** `<dataDir>/default/sessions`, created. */
export function sessionsDirOf(dataDir: string): string {
  const dir = join(dataDir, "default", "sessions");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes a conversation as a sessiond JSONL file; returns its path and size. */
export function writeSessiondFile(
  dataDir: string,
  c: Conversation,
): { file: string; bytes: number } {
  const file = join(sessionsDirOf(dataDir), `${c.sessionId}.jsonl`);
  const fd = openSync(file, "wx");
  try {
    const CHUNK = 2000;
    let batch: Entry[] = [rootEntry(c)];
    for (let i = 0; i < c.entries.length; i++) {
      batch.push(toEntry(c, c.entries[i] as LogicalEntry, i + 2));
      if (batch.length >= CHUNK) {
        writeSync(fd, encodeRecords(batch));
        batch = [];
      }
    }
    if (batch.length > 0) writeSync(fd, encodeRecords(batch));
  } finally {
    closeSync(fd);
  }
  return { file, bytes: statSync(file).size };
}

/** Small linear sessions, spaced ten minutes apart, oldest first. */
export function smallConversations(o: {
  count: number;
  minEntries: number;
  maxEntries: number;
  textBytes: number;
  startMs: number;
}): Conversation[] {
  const out: Conversation[] = [];
  for (let i = 0; i < o.count; i++) {
    const span = o.maxEntries - o.minEntries + 1;
    const entries = o.minEntries + ((i * 7919) % span);
    const createdMs = o.startMs + i * 600_000;
    out.push(
      conversation({
        sessionId: sessionIdAt(createdMs, i),
        createdMs,
        entries,
        pathLength: entries,
        textBytes: o.textBytes,
        idBase: i * 64,
      }),
    );
  }
  return out;
}

/**
 * Scenario 11's sessions (the JSONL files and the PostgreSQL load make the
 * same ones): smallConversations tagged `user=u<i mod users>`, and the
 * rare word once, in the middle entry of the middle session.
 */
export function findableConversations(
  o: Parameters<typeof smallConversations>[0] & { users: number; rareWord: string },
): { cs: Conversation[]; marked: Conversation } {
  const cs = smallConversations(o);
  cs.forEach((c, i) => {
    c.tags = { user: `u${i % o.users}` };
  });
  const marked = cs[Math.floor(cs.length / 2)];
  const entry = marked?.entries[Math.floor(marked.entries.length / 2)];
  if (marked === undefined || entry === undefined) throw new Error("no session to mark");
  entry.text = `${entry.text} ${o.rareWord}`;
  return { cs, marked };
}

/** Writes many conversations (one file each); returns the total size. */
export function writeSessiondFiles(dataDir: string, cs: readonly Conversation[]): number {
  let bytes = 0;
  for (const c of cs) bytes += writeSessiondFile(dataDir, c).bytes;
  return bytes;
}

/** Memoises a generator per key, so data is generated once per run (rows 4 and 5 share theirs). */
export function once<T>(
  cache: Map<string, Promise<T>>,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let p = cache.get(key);
  if (p === undefined) {
    p = make();
    cache.set(key, p);
  }
  return p;
}

export interface BigSession {
  dataDir: string;
  sessionId: string;
  file: string;
  bytes: number;
  entries: number;
  pathLength: number;
}

const bigSessions = new Map<string, Promise<BigSession>>();

/**
 * The bushy session of rows 4 and 5 (100k entries, a 1,000-entry current
 * path, ~900-byte lines: ~90 MB), generated once per run and shared.
 */
export function bigSession(tmpDir: string, quick: boolean): Promise<BigSession> {
  const entries = quick ? 5_000 : 100_000;
  const pathLength = quick ? 500 : 1_000;
  const dataDir = join(tmpDir, `big-${entries}`);
  return once(bigSessions, dataDir, async () => {
    const createdMs = Date.UTC(2025, 0, 15, 9, 30, 0);
    const c = conversation({
      sessionId: sessionIdAt(createdMs, 4),
      createdMs,
      entries,
      pathLength,
      textBytes: 700,
    });
    const { file, bytes } = writeSessiondFile(dataDir, c);
    return { dataDir, sessionId: c.sessionId, file, bytes, entries, pathLength };
  });
}

/** Writes a file in one go (pi-data uses it too). */
export function writeText(file: string, text: string): void {
  writeFileSync(file, text, { flag: "wx" });
}
