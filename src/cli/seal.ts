import { resolve } from "node:path";
import { DEFAULT_DATA_DIR } from "../server/index.js";
import { JsonlEngine, sealBlobs, sealSession } from "../storage/jsonl/index.js";
import { LocalKeyring } from "../storage/keys/index.js";
import { CliError, type Command, parse } from "./command.js";
import { openKeyedPostgres, reportEach, sealed } from "./key-steps.js";
import { printHelp } from "./output.js";

const HELP = `Usage: sessiond seal --keyring FILE --workspace W [ID...] [--data-dir DIR | --storage postgres://...]

Seals the plaintext sessions of a workspace (all, or the IDs given) in a
JSONL data directory: encryption at rest for sessions written before it was
turned on (serve --encrypt-workspaces seals new sessions only). Per
session: a new data key, wrapped by the workspace's key in the keyring, is
written to <id>.key first (durably), then a copy of the log with every
entry's content sealed is fsynced and renamed over the log, under the
session's lock. A crash at any step leaves the session readable (the old
log, or the sealed one with its key); run the command again to finish.

Without IDs, the workspace's blobs (large parts stored once per workspace)
stored in clear are sealed too, under the workspace's blob key
(blobs/blobs.key), each replaced atomically.

Sessions sealed already are skipped (running it twice changes nothing);
erased sessions too. A server may run meanwhile if it was started with the
same --keyring: it reads the sealed files at once, and a client appending
at that moment gets one UNAVAILABLE it retries. A server without the
keyring cannot read the sessions once they are sealed.

On PostgreSQL (--storage postgres://...), each session is sealed in one
transaction (its row locked, a new data key wrapped and stored in
sessiond_session_keys, every payload with content sealed, a new incarnation
so that every replica reads it again): a crash or kill leaves each session
whole, in clear or sealed. Blobs in clear are sealed one transaction each.
Servers on the database should run with the same --keyring.

Prints one line per session: "ID: sealed (N records)", "ID: sealed
already", "ID: erased", or the error; then "blobs: N sealed". Exits 1
when any session failed.

Flags:
  --keyring FILE          the keyring file (0600; made when missing)
  --workspace W           the workspace
  --data-dir DIR          the data directory (default ${DEFAULT_DATA_DIR})
  --storage URL           a PostgreSQL database instead (postgres://user@host/db)
  -h, --help              show this help`;

const OPTIONS = {
  keyring: { type: "string" },
  workspace: { type: "string" },
  "data-dir": { type: "string" },
  storage: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

async function run(argv: string[]): Promise<number> {
  const { values: v, positionals: ids } = parse("seal", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  if (v.keyring === undefined) throw new CliError("seal needs --keyring FILE", 2);
  const workspace = v.workspace;
  if (workspace === undefined) throw new CliError("seal needs --workspace W", 2);
  let keyring: LocalKeyring;
  try {
    keyring = await LocalKeyring.open(v.keyring, { create: true });
  } catch (err) {
    throw new CliError(`--keyring: ${(err as Error).message}`);
  }
  if (v.storage !== undefined) {
    if (v["data-dir"] !== undefined) {
      throw new CliError("seal: --storage and --data-dir exclude each other", 2);
    }
    return sealPostgres(pgUrl("seal", v.storage), keyring, workspace, ids);
  }
  const dataDir = resolve(v["data-dir"] ?? DEFAULT_DATA_DIR);
  let sessionIds: string[] = ids;
  if (sessionIds.length === 0) {
    const engine = new JsonlEngine({ dataDir, need: "readable" });
    try {
      sessionIds = (await engine.listIds(workspace)).sort();
    } finally {
      await engine.close();
    }
  }
  let failed = await reportEach(sessionIds, async (sessionId) =>
    sealed(await sealSession({ dataDir, keys: keyring }, { workspace, sessionId })),
  );
  if (ids.length === 0) {
    // The workspace's blobs (large parts, shared by its sessions) in clear too.
    failed += await reportEach(
      ["blobs"],
      async () => `${await sealBlobs({ dataDir, keys: keyring }, workspace)} sealed`,
    );
  }
  return failed > 0 ? 1 : 0;
}

/** `sessiond seal --storage postgres://...`: the same, in transactions (seal-sessions.ts). */
async function sealPostgres(
  url: string,
  keyring: LocalKeyring,
  workspace: string,
  ids: string[],
): Promise<number> {
  const engine = await openKeyedPostgres(url, keyring);
  try {
    const sessionIds = ids.length > 0 ? ids : (await engine.listIds(workspace)).sort();
    let failed = await reportEach(sessionIds, async (sessionId) =>
      sealed(await engine.seal({ workspace, sessionId })),
    );
    if (ids.length === 0) {
      failed += await reportEach(
        ["blobs"],
        async () => `${await engine.blobs.sealExisting(workspace)} sealed`,
      );
    }
    return failed > 0 ? 1 : 0;
  } finally {
    await engine.close();
  }
}

/** A --storage value that must be a PostgreSQL URL. */
export function pgUrl(command: string, storage: string): string {
  if (!/^postgres(ql)?:\/\//i.test(storage)) {
    throw new CliError(
      `${command}: --storage must be a postgres:// URL (a JSONL data directory is --data-dir)`,
      2,
    );
  }
  return storage;
}

export const seal: Command = { name: "seal", help: HELP, run };
