import { type DescMessage, type MessageShape, toJsonString } from "@bufbuild/protobuf";

/**
 * Everything the client commands print goes through here: proto JSON lines
 * for scripts, aligned tables for people, and writes that respect
 * back-pressure so that `sessiond export big > file` does not buffer the
 * whole log in memory.
 */

/** Writes text to stdout, waiting for the pipe to drain when it is full. */
export function write(text: string): Promise<void> | undefined {
  if (process.stdout.write(text)) return undefined;
  return new Promise((done) => process.stdout.once("drain", done));
}

/** Writes one line to stdout. */
export function println(line = ""): Promise<void> | undefined {
  return write(`${line}\n`);
}

/** One proto message as one line of canonical proto JSON (what `--json` prints). */
export function jsonLine<Desc extends DescMessage>(schema: Desc, msg: MessageShape<Desc>): string {
  return toJsonString(schema, msg);
}

/** Prints a command's help and yields its exit code (0). */
export function printHelp(help: string): number {
  process.stdout.write(`${help}\n`);
  return 0;
}

/** Column alignment of a table. */
export type Align = "left" | "right";

/**
 * Lays out rows under headers, each column as wide as its widest cell;
 * the last left-aligned column is not padded (no trailing blanks).
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  return all.map((row) =>
    row
      .map((cell, c) => {
        if (align[c] === "right") return cell.padStart(widths[c] as number);
        return c === row.length - 1 ? cell : cell.padEnd(widths[c] as number);
      })
      .join("  "),
  );
}

/** Shortens text to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** ANSI styles, applied only when the output is a terminal that wants them. */
export const style = {
  bold: (s: string, on: boolean) => (on ? `\x1b[1m${s}\x1b[22m` : s),
  dim: (s: string, on: boolean) => (on ? `\x1b[2m${s}\x1b[22m` : s),
  red: (s: string, on: boolean) => (on ? `\x1b[31m${s}\x1b[39m` : s),
  yellow: (s: string, on: boolean) => (on ? `\x1b[33m${s}\x1b[39m` : s),
  green: (s: string, on: boolean) => (on ? `\x1b[32m${s}\x1b[39m` : s),
};

/** A timestamp (ms since the epoch) as "YYYY-MM-DD HH:MM:SS" UTC, or "-" when unset. */
export function formatTime(ms: number): string {
  if (ms <= 0) return "-";
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")}Z`;
}
