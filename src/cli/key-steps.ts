/**
 * What `sessiond seal` and `sessiond keys rewrap` share: the PostgreSQL
 * engine they open (with the keyring to open and seal, sealing no new
 * workspace), and the loop that runs one step per session (or the
 * workspace's blobs) and prints one line for each, a refusal included,
 * going on with the next one.
 */
import { isSessiondError } from "../core/errors.js";
import type { LocalKeyring } from "../storage/keys/index.js";
import { PostgresEngine } from "../storage/postgres/index.js";
import { CliError } from "./command.js";
import { println } from "./output.js";

/** The database at `url`, opened to read and write sealed sessions with `keyring`. */
export async function openKeyedPostgres(
  url: string,
  keyring: LocalKeyring,
): Promise<PostgresEngine> {
  try {
    return await PostgresEngine.open({
      url,
      poolSize: 3,
      encryption: { keys: keyring, workspaces: [] },
    });
  } catch (err) {
    throw new CliError(`--storage: ${(err as Error).message}`);
  }
}

/**
 * Runs `step` for each name in turn and prints `NAME: <what it returned>`
 * (nothing for undefined), or `NAME: <message>` when it is refused (a
 * SessiondError; any other error ends the command). Returns how many
 * were refused.
 */
export async function reportEach(
  names: readonly string[],
  step: (name: string) => Promise<string | undefined>,
): Promise<number> {
  let failed = 0;
  for (const name of names) {
    try {
      const said = await step(name);
      if (said !== undefined) println(`${name}: ${said}`);
    } catch (err) {
      if (!isSessiondError(err)) throw err;
      failed++;
      println(`${name}: ${err.message}`);
    }
  }
  return failed;
}

/** What a rewrap of one key did, as `reportEach` prints it (a blob key: nothing when there is none). */
export function rewrapped(r: { from: number; to: number } | undefined): string | undefined {
  if (r === undefined) return undefined;
  return r.from === r.to ? `version ${r.to} already` : `version ${r.from} -> ${r.to}`;
}

/** What a rewrap of one session's data key did (undefined: the session is in clear). */
export function sessionRewrapped(r: { from: number; to: number } | "erased" | undefined): string {
  if (r === undefined) return "in clear";
  return r === "erased" ? "erased" : (rewrapped(r) as string);
}

/** What a seal of one session did, as `reportEach` prints it. */
export function sealed(r: { result: "sealed" | "already" | "erased"; records?: number }): string {
  if (r.result === "sealed") {
    const n = r.records ?? 0;
    return `sealed (${n} record${n === 1 ? "" : "s"})`;
  }
  return r.result === "already" ? "sealed already" : "erased";
}
