import type { ConnectError } from "@connectrpc/connect";
import { connectErrorText } from "./error-line.js";

/**
 * What `tail -f` tells the person watching while its stream is down: one
 * line when the connection is lost, then, while reconnecting keeps failing,
 * a reminder at most every `intervalMs` with the attempt count and the last
 * error, so a dead server does not look like a quiet session. A pure state
 * machine over an injected clock; tail.ts writes the lines to stderr.
 */
export class ReconnectNotes {
  private attempts = 0;
  private lastNoteAt = 0;

  constructor(
    private readonly server: string,
    private readonly intervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A connection or reconnect attempt failed: the line to print, if any. */
  failed(err: ConnectError, afterSeq: bigint): string | undefined {
    this.attempts++;
    const at = this.now();
    if (this.attempts === 1) {
      this.lastNoteAt = at;
      return `connection lost (${connectErrorText(err)}); reconnecting after seq ${afterSeq}`;
    }
    if (at - this.lastNoteAt < this.intervalMs) return undefined;
    this.lastNoteAt = at;
    return `still reconnecting to ${this.server} (attempt ${this.attempts}, last error: ${connectErrorText(err)})`;
  }

  /** The stream delivered again: the line that ends a disconnect, if there was one. */
  delivered(): string | undefined {
    if (this.attempts === 0) return undefined;
    this.attempts = 0;
    return "reconnected";
  }
}
