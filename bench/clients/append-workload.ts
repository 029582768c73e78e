/**
 * Row 9's append workload, the same in each client that times it
 * (data-embedded.ts, data-append-floor.ts, data-pi.ts): the messages of a
 * linear conversation of `count + 1` entries, ~`textBytes` of text each.
 */
import { create } from "@bufbuild/protobuf";
import type { Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { type Conversation, conversation, messageOf } from "../lib/generate.js";

/** The conversation whose entries row 9 appends, one by one. */
export function appendConversation(count: number, textBytes = 700): Conversation {
  return conversation({
    sessionId: "unused",
    createdMs: Date.now(),
    entries: count + 1,
    pathLength: count + 1,
    textBytes,
  });
}

/**
 * Entry `i` of the workload (cycling through `c`) as a sessiond message
 * entry, made with `schema`: the built package's, as the client loads it.
 */
export function messageEntryOf(schema: typeof EntrySchema, c: Conversation): (i: number) => Entry {
  return (i) => {
    const e = c.entries[i % c.entries.length] as Conversation["entries"][number];
    return create(schema, { kind: { case: "message", value: messageOf(e, i + 2) } });
  };
}
