import type { SessionMeta } from "../web/index.js";
import { h, replace } from "./dom.js";

/**
 * The header's "N entries · M messages", kept current while the view
 * follows the session. GetSession's counts are a snapshot at its head seq;
 * each watched entry past that seq adds one entry (and one message if it is
 * one). Entries watched before the snapshot arrives wait for it, so an entry
 * is counted once whichever answer comes first.
 */
export class SessionCounts {
  readonly element = h("span", { class: "counts" });
  private headSeq: bigint | undefined;
  private entries = 0n;
  private messages = 0n;
  private readonly early: { seq: bigint; message: boolean }[] = [];

  /** GetSession's counts: the base the watched entries add to. */
  setSnapshot(meta: SessionMeta): void {
    this.headSeq = meta.headSeq;
    this.entries = meta.entryCount;
    this.messages = meta.messageCount;
    for (const e of this.early.splice(0)) this.count(e.seq, e.message);
    this.draw();
  }

  /** A watched entry. */
  add(seq: bigint, message: boolean): void {
    if (this.headSeq === undefined) this.early.push({ seq, message });
    else if (this.count(seq, message)) this.draw();
  }

  private count(seq: bigint, message: boolean): boolean {
    if (this.headSeq === undefined || seq <= this.headSeq) return false;
    this.headSeq = seq;
    this.entries++;
    if (message) this.messages++;
    return true;
  }

  private draw(): void {
    replace(this.element, `${this.entries} entries · ${this.messages} messages`);
  }
}
