import { isDeepStrictEqual } from "node:util";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  type DeltaChannelHistory,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import type { SessiondClient } from "../../client/index.js";
import { DEFAULT_WORKSPACE, ENTRY_ID_PATTERN, newEntryId } from "../../core/ids.js";
import { againstBase, bytesOf, type StoredValue, storedBytes, utf8Length } from "./stored-value.js";
import {
  type CheckpointRecord,
  carrierEntry,
  checkpointEntry,
  type WriteRecord,
  writesEntry,
} from "./thread-entries.js";
import type { ThreadLog } from "./thread-log.js";
import { KIND_TAG, type PlannedEntry, THREAD_TAG, ThreadSession } from "./thread-session.js";

/** Where a SessiondSaver keeps threads. */
export interface SessiondSaverOptions {
  /** A client of the sessiond server (`createSessiondClient` of `sessiond/client`). */
  client: SessiondClient;
  /** The workspace (default "default"). */
  workspace?: string;
  /** LangGraph's serializer (default: its JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /**
   * false drops expected_seq from writes; it exists so that a test can
   * show what the check prevents (a second writer silently forking the
   * thread). Leave it on.
   */
  compareAndSwap?: boolean;
}

/** A value's text over this many UTF-8 bytes goes into a Message entry of its own (kept as a blob). */
const CARRIED_BYTES = 32 * 1024;
/** Threads whose mirror a saver keeps (the least recently used is dropped first). */
const MIRRORS = 1024;

function configurable(config: RunnableConfig, what: string): Record<string, unknown> {
  const c = config.configurable;
  if (c === undefined) throw new Error(`${what}: the config has no "configurable"`);
  if (typeof c.thread_id !== "string" && typeof c.thread_id !== "number") {
    throw new Error(`${what}: the config's "configurable" has no "thread_id"`);
  }
  return c;
}

/**
 * `value`, or a reference to a carrier entry (added to `entries`) that
 * holds its text when the text is too large for an entry's fields.
 */
function carried(value: StoredValue, root: string, entries: PlannedEntry[]): StoredValue {
  if (value.d === undefined || utf8Length(value.d) <= CARRIED_BYTES) return value;
  const id = newEntryId();
  entries.push({
    init: carrierEntry(id, root, value.d),
    meaning: { kind: "carrier", text: value.d },
  });
  const { d: _text, ...rest } = value;
  return { ...rest, ref: id };
}

async function serialized(serde: SerializerProtocol, value: unknown): Promise<StoredValue> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return storedBytes(type, bytes);
}

/**
 * LangGraph's checkpointer (`BaseCheckpointSaver`) over a sessiond server:
 * a thread is a session (`lg-<hash of the thread id>`, tagged
 * `langgraph.thread`), every namespace's checkpoints a chain of entries in
 * it, each under its parent checkpoint (time travel is a branch), the
 * pending writes under their checkpoint with their task ids, and a
 * channel's value stored once per version, as the growth over the version
 * before when it starts the same (thread-entries.ts). The operations of a
 * thread run in call order in this process; writes carry the head seq of
 * the last read, so a run that read a thread another writer has written
 * since fails with CheckpointConflictError instead of forking it.
 */
export class SessiondSaver extends BaseCheckpointSaver {
  private readonly client: SessiondClient;
  private readonly workspace: string;
  private readonly threads = new Map<string, ThreadSession>();
  private readonly cas: boolean;

  constructor(options: SessiondSaverOptions) {
    super(options.serde);
    this.client = options.client;
    this.workspace = options.workspace ?? DEFAULT_WORKSPACE;
    this.cas = options.compareAndSwap ?? true;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const c = config.configurable;
    if (c?.thread_id === undefined) return undefined;
    const threadId = String(c.thread_id);
    const ns = String(c.checkpoint_ns ?? "");
    const id = getCheckpointId(config);
    const log = await this.read(threadId);
    const record = id ? log?.checkpoint(ns, id) : log?.latestCheckpoint(ns);
    if (log === undefined || record === undefined) return undefined;
    return this.tuple(threadId, log, record);
  }

  async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    const { before, limit, filter } = options ?? {};
    const c = config.configurable ?? {};
    const threadIds = c.thread_id !== undefined ? [String(c.thread_id)] : await this.threadIds();
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const found: { threadId: string; log: ThreadLog; record: CheckpointRecord }[] = [];
    for (const threadId of threadIds) {
      const log = await this.read(threadId);
      if (log === undefined) continue;
      const namespaces =
        c.checkpoint_ns !== undefined ? [String(c.checkpoint_ns)] : log.namespaces();
      for (const ns of namespaces) {
        for (const record of log.checkpointsOf(ns)) {
          if (c.checkpoint_id && record.id !== c.checkpoint_id) continue;
          if (beforeId !== undefined && !(record.id < beforeId)) continue;
          found.push({ threadId, log, record });
        }
      }
    }
    found.sort((a, b) => (a.record.id < b.record.id ? 1 : a.record.id > b.record.id ? -1 : 0));
    let left = limit ?? Number.POSITIVE_INFINITY;
    for (const { threadId, log, record } of found) {
      if (left <= 0) return;
      if (filter !== undefined && Object.keys(filter).length > 0) {
        const metadata = (await this.loaded(record.metadata)) as Record<string, unknown>;
        if (!Object.entries(filter).every(([k, v]) => isDeepStrictEqual(metadata?.[k], v)))
          continue;
      }
      left -= 1;
      yield await this.tuple(threadId, log, record);
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const c = configurable(config, "put");
    const threadId = String(c.thread_id);
    const ns = String(c.checkpoint_ns ?? "");
    const parent = (c.checkpoint_id as string | undefined) || undefined;
    const { channel_values: channelValues, ...rest } = checkpoint;
    const [storedCheckpoint, storedMetadata] = await Promise.all([
      serialized(this.serde, rest),
      serialized(this.serde, metadata),
    ]);
    const fresh: [string, string, StoredValue][] = [];
    for (const [ch, version] of Object.entries(newVersions)) {
      if (!(ch in (channelValues ?? {}))) continue;
      fresh.push([ch, String(version), await serialized(this.serde, channelValues[ch])]);
    }
    const texts: [string, string][] = [];
    const plan = (log: ThreadLog): PlannedEntry[] => {
      texts.length = 0;
      const entries: PlannedEntry[] = [];
      const values: CheckpointRecord["values"] = {};
      for (const [ch, version, whole] of fresh) {
        const base = log.baseOf(ns, ch);
        const value = base === undefined ? whole : againstBase(whole, base.checkpoint, base.text);
        if (!whole.b64 && whole.d !== undefined) texts.push([ch, whole.d]);
        values[ch] = { version, value: carried(value, log.rootId as string, entries) };
      }
      const entryId =
        ENTRY_ID_PATTERN.test(checkpoint.id) && !log.has(checkpoint.id)
          ? checkpoint.id
          : newEntryId();
      const record: CheckpointRecord = {
        entryId,
        ns,
        id: checkpoint.id,
        parent,
        checkpoint: storedCheckpoint,
        metadata: storedMetadata,
        values,
      };
      const under = (parent && log.checkpoint(ns, parent)?.entryId) || (log.rootId as string);
      entries.push({
        init: checkpointEntry(entryId, under, record),
        meaning: { kind: "checkpoint", record },
      });
      return entries;
    };
    await this.thread(threadId).write(plan, (log) => {
      for (const [ch, text] of texts) log.rememberText(ns, ch, checkpoint.id, text);
    });
    return {
      configurable: { thread_id: c.thread_id, checkpoint_ns: ns, checkpoint_id: checkpoint.id },
    };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const c = configurable(config, "putWrites");
    const threadId = String(c.thread_id);
    const ns = String(c.checkpoint_ns ?? "");
    const checkpointId = c.checkpoint_id;
    if (typeof checkpointId !== "string" || checkpointId === "") {
      throw new Error(`putWrites: the config's "configurable" has no "checkpoint_id"`);
    }
    const all: WriteRecord[] = await Promise.all(
      writes.map(async ([channel, value], i) => ({
        task: taskId,
        path: taskPath ?? "",
        channel,
        idx: WRITES_IDX_MAP[channel] ?? i,
        value: await serialized(this.serde, value),
      })),
    );
    await this.thread(threadId).write((log) => {
      const fresh = all.filter((w) => !log.holdsWrite(ns, checkpointId, w.task, w.idx));
      if (fresh.length === 0) return [];
      const entries: PlannedEntry[] = [];
      const root = log.rootId as string;
      const record = {
        ns,
        checkpoint: checkpointId,
        writes: fresh.map((w) => ({ ...w, value: carried(w.value, root, entries) })),
      };
      const under = log.checkpoint(ns, checkpointId)?.entryId ?? root;
      entries.push({
        init: writesEntry(newEntryId(), under, record),
        meaning: { kind: "writes", record },
      });
      return entries;
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    const t = this.thread(String(threadId));
    await t.run(() => t.delete());
  }

  /**
   * LangGraph's walk up a checkpoint's ancestors for its DeltaChannels
   * (each channel's writes back to the nearest ancestor holding its value,
   * which is the seed), done on the thread's log after one read instead of
   * a getTuple (and a whole state deserialized) per ancestor.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const c = config.configurable;
    const ns = String(c?.checkpoint_ns ?? "");
    const id = getCheckpointId(config);
    const log = c?.thread_id === undefined ? undefined : await this.read(String(c.thread_id));
    const target = id ? log?.checkpoint(ns, id) : log?.latestCheckpoint(ns);
    const collected = new Map<string, CheckpointPendingWrite[]>(channels.map((ch) => [ch, []]));
    const seeds = new Map<string, unknown>();
    const remaining = new Set(channels);
    let cur = target?.parent === undefined ? undefined : log?.checkpoint(ns, target.parent);
    while (log !== undefined && cur !== undefined && remaining.size > 0) {
      const writes = sortedWrites(log.writesOf(ns, cur.id)).filter((w) => remaining.has(w.channel));
      for (const w of writes.reverse()) {
        collected.get(w.channel)?.push([w.task, w.channel, await this.loaded(w.value, log)]);
      }
      const checkpoint = (await this.loaded(cur.checkpoint)) as Checkpoint;
      const versions: Record<string, string> = {};
      for (const ch of remaining) {
        const v = checkpoint.channel_versions?.[ch];
        if (v !== undefined) versions[ch] = String(v);
      }
      for (const [ch, { value }] of log.valuesAt(cur, versions)) {
        seeds.set(
          ch,
          await this.serde.loadsTyped(value.t, bytesOf(value, log.text(ns, ch, value))),
        );
        remaining.delete(ch);
      }
      cur = cur.parent === undefined ? undefined : log.checkpoint(ns, cur.parent);
    }
    const out: Record<string, DeltaChannelHistory> = {};
    for (const ch of channels) {
      const history: DeltaChannelHistory = { writes: (collected.get(ch) ?? []).reverse() };
      if (seeds.has(ch)) history.seed = seeds.get(ch);
      out[ch] = history;
    }
    return out;
  }

  /** The thread ids of the workspace's LangGraph threads (one ListSessions per page). */
  private async threadIds(): Promise<string[]> {
    const out: string[] = [];
    let pageToken = "";
    do {
      const page = await this.client.store.listSessions({
        workspace: this.workspace,
        filter: { tags: { [KIND_TAG]: "thread" } },
        pageToken,
      });
      for (const s of page.sessions) {
        const id = s.tags[THREAD_TAG];
        if (id !== undefined) out.push(id);
      }
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  private async tuple(
    threadId: string,
    log: ThreadLog,
    record: CheckpointRecord,
  ): Promise<CheckpointTuple> {
    const { ns, id, parent } = record;
    const checkpoint = (await this.loaded(record.checkpoint)) as Checkpoint;
    const versions = Object.fromEntries(
      Object.entries(checkpoint.channel_versions ?? {}).map(([ch, v]) => [ch, String(v)]),
    );
    const channelValues: Record<string, unknown> = {};
    for (const [ch, { value }] of log.valuesAt(record, versions)) {
      channelValues[ch] = await this.serde.loadsTyped(
        value.t,
        bytesOf(value, log.text(ns, ch, value)),
      );
    }
    checkpoint.channel_values = channelValues;
    if (checkpoint.v < 4 && parent !== undefined) {
      await this.migratePendingSends(checkpoint, log, ns, parent);
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      sortedWrites(log.writesOf(ns, id)).map(
        async (w): Promise<CheckpointPendingWrite> => [
          w.task,
          w.channel,
          await this.loaded(w.value, log),
        ],
      ),
    );
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: id } },
      checkpoint,
      metadata: (await this.loaded(record.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (parent !== undefined) {
      tuple.parentConfig = {
        configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parent },
      };
    }
    return tuple;
  }

  /**
   * Checkpoints of format < 4 kept sends as writes to TASKS of their
   * parent: they become the TASKS channel's value, as LangGraph's savers do.
   */
  private async migratePendingSends(
    checkpoint: Checkpoint,
    log: ThreadLog,
    ns: string,
    parent: string,
  ): Promise<void> {
    const sends = sortedWrites(log.writesOf(ns, parent)).filter((w) => w.channel === TASKS);
    checkpoint.channel_values[TASKS] = await Promise.all(
      sends.map((w) => this.loaded(w.value, log)),
    );
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** A stored value with no base, deserialized. */
  private loaded(value: StoredValue, log?: ThreadLog): Promise<unknown> {
    const text = log === undefined ? (value.d ?? "") : log.ownText(value);
    return this.serde.loadsTyped(value.t, bytesOf(value, text));
  }

  /** The thread's log caught up with the server (undefined: no such thread), in call order. */
  private read(threadId: string): Promise<ThreadLog | undefined> {
    const t = this.thread(threadId);
    return t.run(async () => ((await t.read()) ? t.log : undefined));
  }

  private thread(threadId: string): ThreadSession {
    let t = this.threads.get(threadId);
    if (t !== undefined) {
      this.threads.delete(threadId);
    } else {
      t = new ThreadSession(this.client, this.workspace, threadId, this.cas);
      if (this.threads.size >= MIRRORS)
        this.threads.delete(this.threads.keys().next().value as string);
    }
    this.threads.set(threadId, t);
    return t;
  }
}

/** Writes in the order LangGraph applies them: (task path, task id, index). */
function sortedWrites(writes: WriteRecord[]): WriteRecord[] {
  return [...writes].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.path, a.task, a.idx),
      writesSortKey(b.path, b.task, b.idx),
    ),
  );
}
