import { type ParseArgsConfig, parseArgs } from "node:util";
import { CliError } from "./cli-error.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * A command line a command's flags do not accept. node:util's parseArgs
 * explains its own rules ("To specify a positional argument starting with
 * a '-', place it at the end of the command after '--'"); a person who
 * mistyped a flag wants the flag named, the nearest real one, and the
 * command's usage line, which main.ts adds (it holds the help texts).
 */
export class FlagError extends CliError {
  constructor(
    readonly command: string,
    readonly problem: string,
  ) {
    super(`${command}: ${problem} (see sessiond ${command} --help)`, 2);
  }

  /** The same error with the first line of the command's help, its usage. */
  withUsage(help: string): CliError {
    const usage = help.split("\n", 1)[0]?.replace(/^Usage: /, "") ?? "";
    return new CliError(
      `${this.command}: ${this.problem}; usage: ${usage} (see sessiond ${this.command} --help)`,
      2,
    );
  }
}

/** What is wrong with `argv` for these options, in words; parseArgs' own message when nothing better is found. */
export function flagProblem(
  argv: string[],
  options: Options,
  allowPositionals: boolean,
  parserMessage: string,
): string {
  const { tokens } = parseArgs({
    args: argv,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind === "positional" && !allowPositionals) return `unexpected argument "${t.value}"`;
    if (t.kind !== "option") continue;
    const option = options[t.name];
    if (option === undefined) {
      const near = nearestFlag(t.name, Object.keys(options));
      return `unknown flag ${t.rawName}${near === undefined ? "" : ` (did you mean --${near}?)`}`;
    }
    if (option.type === "string" && (t.value === undefined || dashValue(t.value, t.inlineValue))) {
      return `${t.rawName} needs a value (one that starts with "-" goes as ${t.rawName}=VALUE)`;
    }
    if (option.type === "boolean" && t.inlineValue) return `${t.rawName} takes no value`;
  }
  return parserMessage;
}

/** A value taken from the next argument that looks like a flag: parseArgs refuses it as ambiguous. */
function dashValue(value: string, inline: boolean | undefined): boolean {
  return !inline && value.startsWith("-");
}

/** The flag within two edits of `name` (a typo), if one is. */
function nearestFlag(name: string, flags: string[]): string | undefined {
  let best: { flag: string; distance: number } | undefined;
  for (const flag of flags) {
    const distance = editDistance(name, flag);
    if (distance <= 2 && (best === undefined || distance < best.distance))
      best = { flag, distance };
  }
  return best?.flag;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] as number;
}
