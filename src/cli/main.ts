import { append } from "./append.js";
import type { CliContext, Command } from "./command.js";
import { copy } from "./copy.js";
import { errorLine } from "./error-line.js";
import { exportCommand } from "./export.js";
import { fork } from "./fork.js";
import { fsck } from "./fsck.js";
import { gc } from "./gc.js";
import { parseTopLevel } from "./global-flags.js";
import { importCommand } from "./import.js";
import { ls } from "./ls.js";
import { newCommand } from "./new.js";
import { rewind } from "./rewind.js";
import { rm } from "./rm.js";
import { search } from "./search.js";
import { serve } from "./serve.js";
import { show } from "./show.js";
import { tag } from "./tag.js";
import { tail } from "./tail.js";
import { packageVersion } from "./version.js";

/** Every subcommand, in the order `sessiond --help` lists them. */
const COMMANDS: readonly Command[] = [
  serve,
  newCommand,
  tag,
  gc,
  ls,
  search,
  show,
  tail,
  append,
  rewind,
  fork,
  rm,
  exportCommand,
  importCommand,
  copy,
  fsck,
];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `Usage: sessiond [client flags] <command> [flags]
       sessiond --version

Commands:
${lines.join("\n")}

Run 'sessiond <command> --help' for the flags of a command. The common client
flags (--server, --token, -w, --protocol, --max-message-bytes, --json) may also
come before the command: sessiond -w team ls.`;
}

/** The environment and the terminal, read once here and nowhere else. */
function context(): CliContext {
  const stdoutTty = process.stdout.isTTY === true;
  return {
    env: { server: process.env.SESSIOND_URL, token: process.env.SESSIOND_TOKEN },
    stdoutTty,
    stderrTty: process.stderr.isTTY === true,
    color: stdoutTty && !process.env.NO_COLOR,
  };
}

async function main(argv: string[]): Promise<number> {
  const top = parseTopLevel(argv);
  if (top.kind === "version") {
    process.stdout.write(`sessiond ${packageVersion()}\n`);
    return 0;
  }
  if (top.kind !== "command") {
    process.stdout.write(`${usage()}\n`);
    return top.kind === "help" ? 0 : 2;
  }
  const { name, argv: rest } = top;
  if (name === "help") {
    const topic = COMMANDS.find((c) => c.name === rest[0]);
    process.stdout.write(`${topic?.help ?? usage()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    process.stderr.write(`sessiond: unknown command "${name}" (see sessiond --help)\n`);
    return 2;
  }
  return command.run(rest, context());
}

// `sessiond export … | head` closes the pipe early: that is a normal end, not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const { message, exitCode } = errorLine(err);
    process.stderr.write(`sessiond: ${message}\n`);
    process.exitCode = exitCode;
  },
);
