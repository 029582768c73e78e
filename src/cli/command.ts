import { parseArgs, type ParseArgsConfig } from "node:util";

/** One subcommand of `sessiond`: a file each, registered in main.ts. */
export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The full --help text. */
  readonly help: string;
  /** Runs the command; resolves to the exit code. */
  run(argv: string[]): Promise<number>;
}

/** A user-facing error: printed as one line, exit code 2 (usage) or 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** parseArgs with strict checking; unknown flags become a usage error naming the command. */
export function parse<T extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  argv: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new CliError(`${command}: ${(err as Error).message} (see sessiond ${command} --help)`, 2);
  }
}

/** Parses a non-negative integer flag. */
export function intFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new CliError(`--${name} must be a non-negative integer, got "${value}"`, 2);
  return Number(value);
}
