/**
 * parseArgs options of the flags every client subcommand shares; commands
 * spread them into their own (through client-flags.ts). A file of its own,
 * importing nothing, because main.ts needs them to read the flags before the
 * command name, and client-flags.ts loads the whole RPC client.
 */
export const CLIENT_OPTIONS = {
  server: { type: "string" },
  token: { type: "string" },
  workspace: { type: "string", short: "w" },
  protocol: { type: "string" },
  "max-message-bytes": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;
