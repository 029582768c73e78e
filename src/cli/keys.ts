import { resolve } from "node:path";
import { DEFAULT_DATA_DIR } from "../server/index.js";
import { JsonlEngine, rewrapBlobs } from "../storage/jsonl/index.js";
import { LocalKeyring } from "../storage/keys/index.js";
import { CliError, type Command, parse, positionals } from "./command.js";
import { openKeyedPostgres, reportEach, rewrapped, sessionRewrapped } from "./key-steps.js";
import { printHelp, println } from "./output.js";
import { pgUrl } from "./seal.js";

const HELP = `Usage: sessiond keys (list | rotate | rewrap) --keyring FILE [flags]

Manages the keys of encryption at rest (serve --keyring). Each sealed
session has its own data key, stored wrapped by its workspace's key in
<id>.key beside its log; the keyring file holds the workspace keys, by
version.

  list     the keyring's workspaces, their current key version and versions
  rotate   add a key version for --workspace and make it current: new
           sessions are wrapped under it; data keys wrapped under older
           versions still unwrap (the keyring keeps them)
  rewrap   wrap the data keys of --workspace's sessions (all, or --session)
           again under the current version, in a JSONL --data-dir or a
           PostgreSQL --storage, and (for the whole workspace) its blob key:
           only the key files (rows of sessiond_session_keys and
           sessiond_blob_keys) change, no log, entry or blob is rewritten. A
           server may run meanwhile (each key file is replaced atomically,
           each row updated in one statement). Once every session of a
           workspace is rewrapped, its older versions are no longer needed.

Flags:
  --keyring FILE          the keyring file (0600)
  --workspace W           the workspace (rotate, rewrap)
  --session ID            rewrap: only this session
  --data-dir DIR          rewrap: the data directory (default ${DEFAULT_DATA_DIR})
  --storage URL           rewrap: a PostgreSQL database instead (postgres://user@host/db)
  -h, --help              show this help`;

const OPTIONS = {
  keyring: { type: "string" },
  workspace: { type: "string" },
  session: { type: "string" },
  "data-dir": { type: "string" },
  storage: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

async function run(argv: string[]): Promise<number> {
  const { values: v, positionals: args } = parse("keys", argv, OPTIONS);
  if (v.help) return printHelp(HELP);
  const [action] = positionals("keys", args, ["ACTION"]);
  if (v.keyring === undefined) throw new CliError("keys needs --keyring FILE", 2);
  const keyring = await openKeyring(v.keyring, action === "rotate");
  if (action === "list") {
    for (const k of await keyring.list()) {
      println(`${k.keyId}\tcurrent ${k.current}\tversions ${k.versions.join(",")}`);
    }
    return 0;
  }
  const workspace = v.workspace;
  if (workspace === undefined) throw new CliError(`keys ${action} needs --workspace W`, 2);
  if (action === "rotate") {
    println(`${workspace}: version ${await keyring.rotate(workspace)} is current`);
    return 0;
  }
  if (action !== "rewrap") {
    throw new CliError(`keys: unknown action "${action}" (list, rotate or rewrap)`, 2);
  }
  if (v.storage !== undefined) {
    if (v["data-dir"] !== undefined) {
      throw new CliError("keys rewrap: --storage and --data-dir exclude each other", 2);
    }
    return rewrapPostgres(pgUrl("keys rewrap", v.storage), keyring, workspace, v.session);
  }
  const engine = new JsonlEngine({
    dataDir: resolve(v["data-dir"] ?? DEFAULT_DATA_DIR),
    encryption: { keys: keyring, workspaces: [] },
  });
  try {
    const ids = v.session === undefined ? await engine.listIds(workspace) : [v.session];
    let failed = await reportEach(ids, async (sessionId) =>
      sessionRewrapped(await engine.rewrap({ workspace, sessionId })),
    );
    if (v.session === undefined) {
      // The workspace's blob key (its sealed blobs), when it has one.
      const dataDir = resolve(v["data-dir"] ?? DEFAULT_DATA_DIR);
      failed += await reportEach(["blobs"], async () =>
        rewrapped(await rewrapBlobs({ dataDir, keys: keyring }, workspace)),
      );
    }
    return failed > 0 ? 1 : 0;
  } finally {
    await engine.close();
  }
}

/** `keys rewrap --storage postgres://...`: the key rows updated (seal-sessions.ts, blobs.ts). */
async function rewrapPostgres(
  url: string,
  keyring: LocalKeyring,
  workspace: string,
  session: string | undefined,
): Promise<number> {
  const engine = await openKeyedPostgres(url, keyring);
  try {
    const ids = session === undefined ? (await engine.listIds(workspace)).sort() : [session];
    let failed = await reportEach(ids, async (sessionId) =>
      sessionRewrapped(await engine.rewrap({ workspace, sessionId })),
    );
    if (session === undefined) {
      failed += await reportEach(["blobs"], async () =>
        rewrapped(await engine.blobs.rewrapKey(workspace)),
      );
    }
    return failed > 0 ? 1 : 0;
  } finally {
    await engine.close();
  }
}

async function openKeyring(file: string, create: boolean): Promise<LocalKeyring> {
  try {
    return await LocalKeyring.open(file, { create });
  } catch (err) {
    throw new CliError(`--keyring: ${(err as Error).message}`);
  }
}

export const keys: Command = { name: "keys", help: HELP, run };
