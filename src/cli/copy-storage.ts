import { resolve } from "node:path";
import type { StorageEngine } from "../storage/engine.js";
import { type EncryptionOptions, JsonlEngine } from "../storage/jsonl/index.js";
import { PostgresEngine } from "../storage/postgres/index.js";
import { CliError } from "./command.js";

/**
 * The storage specs of `sessiond copy --from/--to`:
 *
 *   postgres://user[:password]@host[:port]/db   (or postgresql://)  PostgreSQL
 *   jsonl:DIR                                                       a JSONL data dir
 *   DIR                                                             the same, as a plain path
 */
export type StorageSpec =
  | { readonly kind: "jsonl"; readonly dir: string }
  | { readonly kind: "postgres"; readonly url: string };

/** Parses a storage spec; a usage error (exit 2) when it is not one. */
export function parseStorageSpec(flag: string, spec: string): StorageSpec {
  if (/^postgres(ql)?:\/\//i.test(spec)) {
    try {
      new URL(spec);
    } catch {
      throw new CliError(`--${flag}: "${spec}" is not a valid postgres:// URL`, 2);
    }
    return { kind: "postgres", url: spec };
  }
  if (spec.startsWith("jsonl:")) {
    const dir = spec.slice("jsonl:".length);
    if (dir === "") throw new CliError(`--${flag}: jsonl: needs a directory, e.g. jsonl:./data`, 2);
    return { kind: "jsonl", dir: resolve(dir) };
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(spec)) {
    throw new CliError(
      `--${flag}: unknown storage "${spec}" (a directory, jsonl:DIR or postgres://...)`,
      2,
    );
  }
  if (spec === "" || spec === "memory") {
    throw new CliError(
      `--${flag}: "${spec}" is not a storage to copy (a directory, jsonl:DIR or postgres://...)`,
      2,
    );
  }
  return { kind: "jsonl", dir: resolve(spec) };
}

/** How a spec is printed: the directory, or the URL without its password. */
export function describeSpec(s: StorageSpec): string {
  if (s.kind === "jsonl") return `jsonl:${s.dir}`;
  const u = new URL(s.url);
  const user = u.username ? `${decodeURIComponent(u.username)}@` : "";
  return `${u.protocol}//${user}${u.host}${u.pathname}`;
}

/** True when both specs name the same storage (copying onto itself). */
export function sameStorage(a: StorageSpec, b: StorageSpec): boolean {
  if (a.kind === "jsonl" && b.kind === "jsonl") return a.dir === b.dir;
  if (a.kind === "postgres" && b.kind === "postgres") {
    const ua = new URL(a.url);
    const ub = new URL(b.url);
    const port = (u: URL) => u.port || "5432";
    return (
      ua.hostname.toLowerCase() === ub.hostname.toLowerCase() &&
      port(ua) === port(ub) &&
      ua.pathname === ub.pathname
    );
  }
  return false;
}

export interface OpenOptions {
  /**
   * The source: only read, so a JSONL dir must exist (a missing one is a
   * typo, not an empty store) but need not be writable (a read-only
   * snapshot will do). A target is made if missing and must take files.
   */
  readOnly: boolean;
  /** Sessions copied at the same time: sizes the pool and the engine caches. */
  concurrency: number;
  /** The keys (--keyring): sealed sessions opened, new ones sealed as it says (JSONL or PostgreSQL). */
  encryption?: EncryptionOptions | undefined;
}

/** Opens an engine on a spec, without a server. */
export async function openStorage(
  flag: string,
  spec: StorageSpec,
  o: OpenOptions,
): Promise<StorageEngine> {
  // Small caches: the copy touches each session once, so memory stays bounded.
  const cacheSessions = Math.max(2, o.concurrency * 2);
  if (spec.kind === "jsonl") {
    try {
      // Checked once here: a target that cannot take files fails now, not once per session.
      const need = o.readOnly ? "readable" : "writable";
      return new JsonlEngine({ dataDir: spec.dir, cacheSessions, need, encryption: o.encryption });
    } catch (err) {
      throw new CliError(`--${flag}: ${(err as Error).message}`);
    }
  }
  try {
    // open() connects and applies the schema: a bad URL fails here, once, not per session.
    return await PostgresEngine.open({
      url: spec.url,
      poolSize: o.concurrency + 1,
      cacheSessions,
      encryption: o.encryption,
    });
  } catch (err) {
    throw new CliError(`--${flag} ${describeSpec(spec)}: ${(err as Error).message}`);
  }
}
