import { CliError, type Command } from "./command.js";
import { serve } from "./serve.js";

/** Every subcommand, in the order `sessiond --help` lists them. */
const COMMANDS: readonly Command[] = [serve];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: sessiond <command> [flags]\n\nCommands:\n${lines.join("\n")}\n\nRun 'sessiond <command> --help' for the flags of a command.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) throw new CliError(`unknown command "${name}"\n${usage()}`, 2);
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`sessiond: ${message}\n`);
    process.exitCode = err instanceof CliError ? err.exitCode : 1;
  },
);
