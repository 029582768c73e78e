import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import type { EntryInit, SessiondClient } from "../client/index.js";
import { newEntryId } from "../core/ids.js";
import { SessionLog } from "../core/session-log.js";

/** Where a session lives on a server. */
export interface SessionAddress {
  workspace: string;
  sessionId: string;
}

/**
 * How many times a write that lost a race is planned again before the
 * conflict is given to the caller: every lost race means another writer
 * made progress, so this only ends a pathological livelock.
 */
const MAX_ATTEMPTS = 100;

/** True for the ABORTED of a failed expected_seq: the log moved, plan again. */
function isConflict(err: unknown): boolean {
  return ConnectError.from(err).code === Code.Aborted;
}

/** True for ALREADY_EXISTS (e.g. a session created with other parameters). */
export function isAlreadyExists(err: unknown): boolean {
  return ConnectError.from(err).code === Code.AlreadyExists;
}

/** True for NOT_FOUND (a session that was never created, or deleted). */
export function isNotFound(err: unknown): boolean {
  return ConnectError.from(err).code === Code.NotFound;
}

/** A planned entry with its id chosen here, so that later entries of the batch can name it. */
export function plannedEntry(init: EntryInit): Entry {
  const entry = create(EntrySchema, init);
  if (entry.id === "") entry.id = newEntryId();
  return entry;
}

/**
 * One session on a server, mirrored in a local SessionLog (core) that is
 * caught up with GetEntries before every decision: adapters plan their
 * writes against the log as it is (which item is last, which tool call a
 * result answers) and write with `expected_seq`, so that a writer that
 * planned against an old log is refused (ABORTED), catches up and plans
 * again instead of losing another writer's entries. The mirror reads only
 * what it has not seen: a long session costs one page per new batch.
 */
export class RemoteSession {
  private log: SessionLog;

  constructor(
    private readonly client: SessiondClient,
    readonly address: SessionAddress,
  ) {
    this.log = new SessionLog(address.sessionId);
  }

  /** The session's log as the server has it now. */
  async read(): Promise<SessionLog> {
    const { workspace, sessionId } = this.address;
    for (;;) {
      const page = await this.client.session.getEntries({
        workspace,
        session: sessionId,
        afterSeq: BigInt(this.log.headSeq),
      });
      if (page.headSeq < BigInt(this.log.headSeq)) {
        // Deleted and created again behind our back: read it afresh.
        this.log = new SessionLog(sessionId);
        continue;
      }
      // A read running beside this one may have applied part of the page already.
      this.log.applyAll(page.entries.filter((e) => e.seq > BigInt(this.log.headSeq)));
      if (page.entries.length === 0 || BigInt(this.log.headSeq) >= page.headSeq) return this.log;
    }
  }

  /** Forgets what was mirrored (the session was deleted). */
  forget(): void {
    this.log = new SessionLog(this.address.sessionId);
  }

  /**
   * Appends the entries `plan` makes of the current log (none: nothing to
   * do), planning again whenever another writer got there first.
   */
  async append(plan: (log: SessionLog) => readonly Entry[]): Promise<void> {
    await this.retried(async (log) => {
      const entries = plan(log);
      if (entries.length === 0) return;
      await this.client.session.append({
        ...this.target(),
        entries: [...entries],
        expectedSeq: BigInt(log.headSeq),
      });
    });
  }

  /** Moves the leaf to the entry `plan` picks of the current log (undefined: stay). */
  async rewind(plan: (log: SessionLog) => string | undefined): Promise<void> {
    await this.retried(async (log) => {
      const target = plan(log);
      if (target === undefined) return;
      await this.client.session.rewind({
        ...this.target(),
        target,
        allowBeforeCompaction: true,
        expectedSeq: BigInt(log.headSeq),
      });
    });
  }

  /** Moves the leaf back to the root (history kept). */
  async reset(): Promise<void> {
    await this.retried(async (log) => {
      await this.client.session.reset({ ...this.target(), expectedSeq: BigInt(log.headSeq) });
    });
  }

  private target(): { workspace: string; session: string } {
    return { workspace: this.address.workspace, session: this.address.sessionId };
  }

  private async retried(write: (log: SessionLog) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const log = await this.read();
      try {
        return await write(log);
      } catch (err) {
        if (!isConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }
}
