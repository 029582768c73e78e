import type { CliContext, Command } from "./command.js";
import { FlagError } from "./flag-error.js";
import { parseTopLevel } from "./global-flags.js";
import { packageVersion } from "./version.js";

/** A subcommand as the command list shows it, and how to load its module. */
interface CommandEntry {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

/**
 * Every subcommand, in the order `sessiond --help` lists them. A command's
 * module loads only when that command runs or shows its help: `serve` alone
 * pulls in the server, PostgreSQL and OpenTelemetry, the client commands the
 * RPC client, and loading all of them cost every `sessiond` run, even
 * `--version`, about half a second of CPU (tests and scripts start it often).
 */
const COMMANDS: readonly CommandEntry[] = [
  {
    name: "serve",
    summary: "run the sessiond server",
    load: async () => (await import("./serve.js")).serve,
  },
  {
    name: "new",
    summary: "create a session and print its id",
    load: async () => (await import("./new.js")).newCommand,
  },
  {
    name: "tag",
    summary: "set or remove a session's tags",
    load: async () => (await import("./tag.js")).tag,
  },
  {
    name: "gc",
    summary: "remove sessions by a retention policy (--max-age, --keep)",
    load: async () => (await import("./gc.js")).gc,
  },
  {
    name: "ls",
    summary: "list sessions (newest first)",
    load: async () => (await import("./ls.js")).ls,
  },
  {
    name: "search",
    summary: "find message entries by text (every word, case-insensitive)",
    load: async () => (await import("./search.js")).search,
  },
  {
    name: "show",
    summary: "draw a session's tree (current path marked), or its state",
    load: async () => (await import("./show.js")).show,
  },
  {
    name: "tail",
    summary: "print a session's entries; -f follows new ones",
    load: async () => (await import("./tail.js")).tail,
  },
  {
    name: "append",
    summary: "append a text message to a session",
    load: async () => (await import("./append.js")).append,
  },
  {
    name: "rewind",
    summary: "move a session's current leaf to an earlier entry or label",
    load: async () => (await import("./rewind.js")).rewind,
  },
  {
    name: "redact",
    summary: "purge the content of entries (a pasted secret), keeping the tree",
    load: async () => (await import("./redact.js")).redact,
  },
  {
    name: "erase",
    summary: "erase sessions for good (by id, tag or workspace), keeping their tree",
    load: async () => (await import("./erase.js")).erase,
  },
  {
    name: "share",
    summary: "make, list or revoke a read-only link to a session's path",
    load: async () => (await import("./share.js")).share,
  },
  {
    name: "usage",
    summary: "what a session cost: its tree, current path, branches and subagents",
    load: async () => (await import("./usage.js")).usage,
  },
  {
    name: "usage-report",
    summary: "what a workspace used and cost over a time window, by bucket, model and tag",
    load: async () => (await import("./usage-report.js")).usageReport,
  },
  {
    name: "fork",
    summary: "copy a session's path into a new session",
    load: async () => (await import("./fork.js")).fork,
  },
  {
    name: "rm",
    summary: "delete a session (and with --subagents its subagents)",
    load: async () => (await import("./rm.js")).rm,
  },
  {
    name: "export",
    summary: "write a session's raw log as JSONL to stdout",
    load: async () => (await import("./export.js")).exportCommand,
  },
  {
    name: "import",
    summary: "store an exported log, or pi / Claude Code sessions, as sessions",
    load: async () => (await import("./import.js")).importCommand,
  },
  {
    name: "copy",
    summary: "copy every session to another storage, e.g. a data dir to PostgreSQL (no server)",
    load: async () => (await import("./copy.js")).copy,
  },
  {
    name: "keys",
    summary:
      "encryption at rest: list, rotate the keyring's keys, rewrap sessions' data keys (no server)",
    load: async () => (await import("./keys.js")).keys,
  },
  {
    name: "seal",
    summary: "encryption at rest: seal a workspace's existing plaintext sessions (no server)",
    load: async () => (await import("./seal.js")).seal,
  },
  {
    name: "fsck",
    summary: "check the session files of a data directory (no server needed)",
    load: async () => (await import("./fsck.js")).fsck,
  },
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
    process.stdout.write(`${topic === undefined ? usage() : (await topic.load()).help}\n`);
    return 0;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) {
    process.stderr.write(`sessiond: unknown command "${name}" (see sessiond --help)\n`);
    return 2;
  }
  const command = await entry.load();
  return command.run(rest, context()).catch((err: unknown) => {
    throw err instanceof FlagError ? err.withUsage(command.help) : err;
  });
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
  async (err: unknown) => {
    // Loaded here, not up front: it imports connect, which --version and --help do not need.
    const { errorLine } = await import("./error-line.js");
    const { message, exitCode } = errorLine(err);
    process.stderr.write(`sessiond: ${message}\n`);
    process.exitCode = exitCode;
  },
);
