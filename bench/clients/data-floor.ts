/**
 * A floor in a fresh process (bench/lib/floors.ts). Args:
 * {"kind":"parse","file":…} or {"kind":"first-line","dir":…}.
 * Prints {ms, count, bytes}.
 */
import { firstLineFloor, parseFloor } from "../lib/floors.js";

const args = JSON.parse(process.argv[2] ?? "{}") as { kind: string; file?: string; dir?: string };
const result =
  args.kind === "parse"
    ? parseFloor(args.file as string)
    : args.kind === "first-line"
      ? firstLineFloor(args.dir as string)
      : undefined;
if (result === undefined) throw new Error(`unknown floor ${args.kind}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
