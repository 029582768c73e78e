import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { dataLoss } from "../../core/errors.js";
import type { EntrySource, SessionLog } from "../../core/session-log.js";

/**
 * The appended entries of one log, as it keeps them once they are durable:
 * their payloads, by seq, the canonical JSON the write's records carry (the text
 * the CRC and the file bytes were made of), decoded again the first time a
 * reader asks for one (SessionLog.stored). The log of a busy session then
 * holds a string per entry, not the entry's dozen objects, which every
 * garbage collection would walk; a watched session's entries are read back
 * at once (the watch hub) and kept decoded as before.
 */
export class StoredPayloads implements EntrySource {
  /** Payloads by seq (holes for entries the log holds otherwise). */
  private readonly texts: (string | undefined)[] = [];

  constructor(
    /** The log whose entries these are. */
    readonly log: SessionLog,
    /** How errors name the session ("session "x" in workspace "y""). */
    private readonly name: string,
  ) {}

  /** Keeps `text` as the entry of seq `seq` of the log, which lets go of its objects. */
  keep(seq: number, text: string): void {
    this.texts[seq] = text;
    this.log.stored(seq, this, 0, 0);
  }

  decode(seq: number): Entry {
    const text = this.texts[seq];
    if (text === undefined) this.corrupt(seq, 0, 0, "no payload kept for it");
    let entry: Entry;
    try {
      entry = decodeEntry(JSON.parse(text), { ignoreUnknownFields: true });
    } catch (err) {
      return this.corrupt(seq, 0, 0, `payload is not a valid entry (${String(err).slice(0, 120)})`);
    }
    // Decoded once: the log keeps the entry from here on.
    this.texts[seq] = undefined;
    return entry;
  }

  corrupt(seq: number, _start: number, _end: number, reason: string): never {
    throw dataLoss(`${this.name}: entry seq ${seq} as written does not read back: ${reason}`);
  }
}
