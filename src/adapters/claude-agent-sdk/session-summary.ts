import type {
  SessionKey,
  SessionStoreEntry,
  SessionSummaryEntry,
} from "@anthropic-ai/claude-agent-sdk";
import type { SessionLog } from "../../core/session-log.js";
import { lineOf } from "./transcript-entry.js";

/** The SDK's `foldSessionSummary`: the summary after a batch of lines. */
export type SummaryFold = (
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
) => SessionSummaryEntry;

let sdkFold: Promise<SummaryFold | undefined> | undefined;

/**
 * The SDK's `foldSessionSummary`, imported on first use (the SDK is an
 * optional peer: this module loads without it). Undefined when the SDK
 * cannot be loaded (not installed, or CommonJS on a Node that cannot
 * require an ES module): the store then keeps no summaries.
 */
export function loadSummaryFold(): Promise<SummaryFold | undefined> {
  sdkFold ??= import("@anthropic-ai/claude-agent-sdk").then(
    (sdk) => sdk.foldSessionSummary,
    () => undefined,
  );
  return sdkFold;
}

/**
 * The summaries of main sessions, folded from their logs with the SDK's
 * fold: the summary of a log is the fold of every line it carries, in seq
 * order, whoever wrote them (a writer that kept no summary included). What
 * was folded is remembered per log (a mirror's log only grows; a session
 * created again is a new log), so a mirror folds each line once.
 */
export class SessionSummaries {
  private readonly folded = new WeakMap<
    SessionLog,
    { seq: number; summary: SessionSummaryEntry }
  >();

  /** The summary of `log` with `lines` (about to be appended) folded in after it. */
  after(
    log: SessionLog,
    key: SessionKey,
    fold: SummaryFold,
    lines: SessionStoreEntry[],
  ): Record<string, unknown> {
    let known = this.folded.get(log);
    if (known === undefined || known.seq < log.headSeq) {
      const unseen = log.slice(known?.seq ?? 0).flatMap((e) => lineOf(e) ?? []);
      known = { seq: log.headSeq, summary: fold(known?.summary, key, unseen) };
      this.folded.set(log, known);
    }
    return lines.length === 0 ? known.summary.data : fold(known.summary, key, lines).data;
  }
}
