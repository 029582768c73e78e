import { fromJsonString } from "@bufbuild/protobuf";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { CliError } from "./command.js";

/**
 * Reads the export format: one Entry as proto JSON per line. Blank lines
 * are skipped (an editor's trailing newline is not an error); anything
 * else that does not parse is refused naming the file and line, before a
 * single request is sent.
 */
export function parseEntryLines(text: string, source: string): Entry[] {
  const entries: Entry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    try {
      entries.push(fromJsonString(EntrySchema, line));
    } catch (err) {
      throw new CliError(
        `${source}:${i + 1}: not an Entry in proto JSON: ${(err as Error).message}`,
      );
    }
  }
  return entries;
}
