import { WORKSPACE_PATTERN } from "../core/ids.js";
import type { EncryptionOptions } from "../storage/jsonl/index.js";
import { LocalKeyring } from "../storage/keys/index.js";
import { CliError } from "./command.js";

/** The flags of encryption at rest, shared by serve and copy. */
export const ENCRYPTION_OPTIONS = {
  keyring: { type: "string" },
  "encrypt-workspaces": { type: "string" },
  "encrypt-all": { type: "boolean" },
} as const;

/**
 * --keyring, --encrypt-workspaces, --encrypt-all as the engine's options:
 * a keyring without a workspace to seal still opens sessions sealed before.
 */
export async function encryptionOf(
  v: { keyring?: string; "encrypt-workspaces"?: string; "encrypt-all"?: boolean },
  /** The storage can seal (serve: a JSONL data dir or PostgreSQL; copy: a JSONL side). */
  seals: boolean,
  /** Where encryption works, for the refusal's message. */
  where = "jsonl storage only",
): Promise<EncryptionOptions | undefined> {
  const list = v["encrypt-workspaces"];
  const all = v["encrypt-all"] === true;
  if (v.keyring === undefined) {
    if (list !== undefined || all) {
      throw new CliError("--encrypt-workspaces and --encrypt-all need --keyring FILE", 2);
    }
    return undefined;
  }
  if (!seals) {
    throw new CliError(`--keyring: encryption at rest is supported on ${where}`, 2);
  }
  if (list !== undefined && all) {
    throw new CliError("--encrypt-workspaces and --encrypt-all exclude each other", 2);
  }
  const workspaces = list === undefined ? [] : list.split(",").map((w) => w.trim());
  for (const w of workspaces) {
    if (!WORKSPACE_PATTERN.test(w)) {
      throw new CliError(`--encrypt-workspaces: "${w}" is not a workspace name`, 2);
    }
  }
  try {
    const keys = await LocalKeyring.open(v.keyring, { create: all || workspaces.length > 0 });
    return { keys, workspaces: all ? "all" : workspaces };
  } catch (err) {
    throw new CliError(`--keyring: ${(err as Error).message}`);
  }
}
