import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { type ContentPartInit, textPart } from "../core/entry-builders.js";

/**
 * What one block of a message's content becomes: a part, the reason it is
 * left out (a string, noted as an import problem), or undefined when the
 * block's type is not one the importer knows.
 */
export type BlockPart = (block: JsonObject) => ContentPartInit | string | undefined;

/**
 * A message's content as content parts, for the importers whose formats
 * keep content as a plain string or as an array of typed blocks (pi, Claude
 * Code / the Anthropic API): the walk and the notes on what is left out are
 * the same, only the block types differ (`partOf`).
 */
export function contentParts(
  content: JsonValue | undefined,
  problems: string[],
  partOf: BlockPart,
): ContentPartInit[] {
  if (typeof content === "string") return content === "" ? [] : [textPart(content)];
  if (!Array.isArray(content)) return [];
  const parts: ContentPartInit[] = [];
  for (const block of content as JsonObject[]) {
    const part = block === null || typeof block !== "object" ? undefined : partOf(block);
    if (part === undefined)
      problems.push(`content block of type ${JSON.stringify(block?.type)} left out`);
    else if (typeof part === "string") problems.push(part);
    else parts.push(part);
  }
  return parts;
}
