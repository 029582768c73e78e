import { CLIENT_OPTIONS } from "./client-options.js";
import { CliError } from "./command.js";

/**
 * What comes before the command name: `sessiond --version`, `sessiond -h`,
 * or client flags given once for the command that follows
 * (`sessiond -w team ls`, `sessiond --server URL --json ls`), as people
 * used to git or kubectl type them.
 */
export type TopLevel =
  | { kind: "version" }
  | { kind: "help" }
  /** No command name was given. */
  | { kind: "none" }
  /** The command, and its argv with the leading client flags first (later ones win). */
  | { kind: "command"; name: string; argv: string[] };

type Option = { readonly type: "string" | "boolean"; readonly short?: string };
const OPTIONS: Readonly<Record<string, Option>> = CLIENT_OPTIONS;

/** The client option a leading flag names (`--server`, `--server=URL`, `-w`, `-wteam`). */
function optionOf(arg: string): { option: Option; inline: boolean } | undefined {
  if (arg.startsWith("--")) {
    const name = arg.slice(2).split("=", 1)[0] as string;
    const option = Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
    return option && { option, inline: arg.includes("=") };
  }
  const option = Object.values(OPTIONS).find((o) => o.short === arg[1]);
  return option && { option, inline: arg.length > 2 };
}

/** Splits argv at the command name; unknown leading flags are usage errors. */
export function parseTopLevel(argv: readonly string[]): TopLevel {
  const leading: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--version" || arg === "-V") return { kind: "version" };
    if (arg === "--help" || arg === "-h") return { kind: "help" };
    if (!arg.startsWith("-") || arg === "-") break;
    const found = optionOf(arg);
    if (found === undefined) {
      throw new CliError(`unknown flag "${arg}" before the command (see sessiond --help)`, 2);
    }
    leading.push(arg);
    if (found.option.type === "string" && !found.inline) {
      const value = argv[i + 1];
      if (value === undefined) throw new CliError(`${arg} needs a value`, 2);
      leading.push(value);
      i++;
    }
  }
  const name = argv[i];
  if (name === undefined) return { kind: "none" };
  return { kind: "command", name, argv: [...leading, ...argv.slice(i + 1)] };
}
