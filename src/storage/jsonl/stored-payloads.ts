import type { Entry } from "../../../gen/sessiond/v1/entry_pb.js";
import { decodeEntry } from "../../core/codec/entry-from-json.js";
import { dataLoss } from "../../core/errors.js";
import type { EntrySource } from "../../core/session-log.js";

/**
 * The entries of one write, as the log keeps them once they are durable:
 * their payloads, the canonical JSON the write's records carry (the text
 * the CRC and the file bytes were made of), decoded again the first time a
 * reader asks for one (SessionLog.stored). The log of a busy session then
 * holds a string per entry, not the entry's dozen objects, which every
 * garbage collection would walk; a watched session's entries are read back
 * at once (the watch hub) and kept decoded as before.
 */
export class StoredPayloads implements EntrySource {
  constructor(
    /** The payloads of seqs `first`, `first + 1`, ... */
    private readonly texts: readonly string[],
    private readonly first: number,
    /** How errors name the session ("session "x" in workspace "y""). */
    private readonly name: string,
  ) {}

  decode(seq: number): Entry {
    const text = this.texts[seq - this.first];
    if (text === undefined) this.corrupt(seq, 0, 0, "no payload kept for it");
    let entry: Entry;
    try {
      entry = decodeEntry(JSON.parse(text), { ignoreUnknownFields: true });
    } catch (err) {
      return this.corrupt(seq, 0, 0, `payload is not a valid entry (${String(err).slice(0, 120)})`);
    }
    return entry;
  }

  corrupt(seq: number, _start: number, _end: number, reason: string): never {
    throw dataLoss(`${this.name}: entry seq ${seq} as written does not read back: ${reason}`);
  }
}
