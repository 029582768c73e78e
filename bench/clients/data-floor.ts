/**
 * A floor in a fresh process (bench/lib/floors.ts). Args:
 * {"kind":"parse","file":…}, {"kind":"first-line","dir":…} or
 * {"kind":"indexOf","dir":…,"word":…}.
 * Prints {ms, count, bytes}.
 */
import { firstLineFloor, indexOfFloor, parseFloor } from "../lib/floors.js";

const args = JSON.parse(process.argv[2] ?? "{}") as {
  kind: string;
  file?: string;
  dir?: string;
  word?: string;
};
const result =
  args.kind === "parse"
    ? parseFloor(args.file as string)
    : args.kind === "first-line"
      ? firstLineFloor(args.dir as string)
      : args.kind === "indexOf"
        ? indexOfFloor(args.dir as string, args.word as string)
        : undefined;
if (result === undefined) throw new Error(`unknown floor ${args.kind}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
