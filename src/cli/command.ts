import { type ParseArgsConfig, parseArgs } from "node:util";
import { CliError } from "./cli-error.js";
import { FlagError, flagProblem } from "./flag-error.js";

/**
 * What a command may know about its surroundings. main.ts reads the
 * environment and the terminal once and passes this down, so no command
 * reads `process.env` or guesses about TTYs itself.
 */
export interface CliContext {
  /** Defaults for --server and --token (SESSIOND_URL, SESSIOND_TOKEN). */
  readonly env: { readonly server?: string | undefined; readonly token?: string | undefined };
  /** stdout is a terminal: tables and trees may be styled. */
  readonly stdoutTty: boolean;
  /** stderr is a terminal: progress lines and hints may be drawn there. */
  readonly stderrTty: boolean;
  /** ANSI styling on stdout is wanted (a terminal, and NO_COLOR unset). */
  readonly color: boolean;
}

/** One subcommand of `sessiond`: a file each, registered (with its summary line) in main.ts. */
export interface Command {
  readonly name: string;
  /** The full --help text. */
  readonly help: string;
  /** Runs the command; resolves to the exit code. */
  run(argv: string[], ctx: CliContext): Promise<number>;
}

export { CliError } from "./cli-error.js";

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
    throw new FlagError(
      command,
      flagProblem(argv, options, allowPositionals, (err as Error).message),
    );
  }
}

/** Parses a non-negative integer flag. */
export function intFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value))
    throw new CliError(`--${name} must be a non-negative integer, got "${value}"`, 2);
  return Number(value);
}

/**
 * The positional arguments of a command, checked against the names it
 * expects (required first, then optional ones), so that a missing or extra
 * argument is a usage error that says which one.
 */
export function positionals(
  command: string,
  given: readonly string[],
  required: readonly string[],
  optional: readonly string[] = [],
): string[] {
  if (given.length < required.length) {
    const missing = required.slice(given.length).join(" ");
    throw new CliError(`${command}: missing ${missing} (see sessiond ${command} --help)`, 2);
  }
  if (given.length > required.length + optional.length) {
    const extra = given.slice(required.length + optional.length).join(" ");
    throw new CliError(
      `${command}: unexpected argument ${extra} (see sessiond ${command} --help)`,
      2,
    );
  }
  return [...given];
}
