import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { failedPrecondition } from "../../core/errors.js";
import { quote } from "../../core/ids.js";
import { associatedData, KEY_BYTES, newKey, open, seal } from "../seal/aead.js";
import type { KeyContext, KeyProvider, WrappedKey } from "./key-provider.js";

/**
 * The default KeyProvider: a JSON file of versioned 256-bit keys, one set
 * per key id (sessiond's key ids are workspace names):
 *
 *   {"format":"sessiond-keyring","version":1,
 *    "keys":{"team-a":{"current":2,"versions":{"1":"<base64>","2":"<base64>"}}}}
 *
 * - The file must be mode 0600 (or stricter): one readable or writable by
 *   group or others is refused, as is a malformed one, with an error
 *   naming the file (FAILED_PRECONDITION: the operator fixes it).
 * - A data key is wrapped with AES-256-GCM under the current version,
 *   bound to the key id, the version and the context (workspace, session).
 * - `rotate` adds a version and makes it current; older versions stay, so
 *   data keys wrapped under them still unwrap (rewrap moves them over).
 * - Every change (a key made on first use, a rotation) is made under a
 *   lock (`<file>.lock`, a directory), from the file as it is then, and
 *   written atomically: temp file (0600), fsync, rename over, directory
 *   fsync. Two processes sharing the file never lose each other's keys.
 */
export class LocalKeyring implements KeyProvider {
  /** The file's stat signature when `content` was read from it. */
  private seen = "";

  private constructor(
    readonly file: string,
    private content: KeyringContent,
  ) {}

  /**
   * Opens the keyring at `file`; with `create`, an empty one is made when
   * there is none (0600, atomically).
   */
  static async open(file: string, opts: { create?: boolean } = {}): Promise<LocalKeyring> {
    const abs = path.resolve(file);
    let content = await readKeyring(abs, opts.create === true);
    if (content === undefined) {
      content = await withLock(abs, async () => {
        const now = await readKeyring(abs, true);
        if (now !== undefined) return now;
        const empty: KeyringContent = { format: FORMAT, version: 1, keys: {} };
        await writeKeyring(abs, empty);
        return empty;
      });
    }
    return new LocalKeyring(abs, content);
  }

  async currentVersion(keyId: string): Promise<number> {
    await this.reload();
    return this.content.keys[keyId]?.current ?? 0;
  }

  async wrap(keyId: string, dataKey: Uint8Array, context: KeyContext): Promise<WrappedKey> {
    // A rotation by another process (the CLI) is seen by the next session created.
    await this.refresh();
    let set = this.content.keys[keyId];
    if (set === undefined) set = await this.change(keyId, (s) => s ?? firstSet());
    const version = set.current;
    const key = keyBytes(set, version);
    return { keyId, version, wrapped: seal(key, dataKey, wrapAd(keyId, version, context)) };
  }

  async unwrap(w: WrappedKey, context: KeyContext): Promise<Uint8Array> {
    let set = this.content.keys[w.keyId];
    // Another process may have made or rotated the key since this one read the file.
    if (set?.versions[String(w.version)] === undefined) {
      await this.reload();
      set = this.content.keys[w.keyId];
    }
    if (set === undefined || set.versions[String(w.version)] === undefined) {
      throw failedPrecondition(
        `keyring ${this.file} has no version ${w.version} of key ${quote(w.keyId)} (a data key is wrapped under it): use the keyring it was written with`,
      );
    }
    const out = open(keyBytes(set, w.version), w.wrapped, wrapAd(w.keyId, w.version, context));
    if (out === undefined || out.length !== KEY_BYTES) {
      throw failedPrecondition(
        `a data key wrapped under version ${w.version} of key ${quote(w.keyId)} does not unwrap with keyring ${this.file} (another keyring's key of the same name, or the wrapped key belongs to another session)`,
      );
    }
    return out;
  }

  /** Adds a version of `keyId` and makes it current; returns it. New data keys are wrapped under it. */
  async rotate(keyId: string): Promise<number> {
    const set = await this.change(keyId, (s) => {
      if (s === undefined) return firstSet();
      const version = Math.max(...Object.keys(s.versions).map(Number)) + 1;
      return {
        current: version,
        versions: { ...s.versions, [String(version)]: newKey().toString("base64") },
      };
    });
    return set.current;
  }

  /** The key ids the keyring holds, with their versions. */
  async list(): Promise<{ keyId: string; current: number; versions: number[] }[]> {
    await this.reload();
    return Object.entries(this.content.keys)
      .map(([keyId, s]) => ({
        keyId,
        current: s.current,
        versions: Object.keys(s.versions)
          .map(Number)
          .sort((a, b) => a - b),
      }))
      .sort((a, b) => (a.keyId < b.keyId ? -1 : 1));
  }

  private async reload(): Promise<void> {
    this.content = (await readKeyring(this.file, false)) as KeyringContent;
    this.seen = await signatureOf(this.file);
  }

  /** Reads the file again when it changed since it was read (one stat). */
  private async refresh(): Promise<void> {
    if ((await signatureOf(this.file)) !== this.seen) await this.reload();
  }

  /** Changes one key set under the lock, from the file as it is then. */
  private change(keyId: string, fn: (s: KeySet | undefined) => KeySet): Promise<KeySet> {
    return withLock(this.file, async () => {
      const now = (await readKeyring(this.file, false)) as KeyringContent;
      const before = now.keys[keyId];
      const after = fn(before);
      if (after !== before) {
        now.keys[keyId] = after;
        await writeKeyring(this.file, now);
      }
      this.content = now;
      this.seen = await signatureOf(this.file);
      return after;
    });
  }
}

const FORMAT = "sessiond-keyring";

async function signatureOf(file: string): Promise<string> {
  const st = await fs.stat(file).catch(() => undefined);
  return st === undefined ? "" : `${st.ino}:${st.size}:${st.mtimeMs}`;
}
/** What a wrapped data key's associated data starts with (this scheme's version). */
const WRAP_DOMAIN = "sessiond/data-key/1";

interface KeySet {
  current: number;
  versions: Record<string, string>;
}

interface KeyringContent {
  format: typeof FORMAT;
  version: 1;
  keys: Record<string, KeySet>;
}

function firstSet(): KeySet {
  return { current: 1, versions: { "1": newKey().toString("base64") } };
}

function keyBytes(set: KeySet, version: number): Buffer {
  return Buffer.from(set.versions[String(version)] as string, "base64");
}

function wrapAd(keyId: string, version: number, context: KeyContext): Buffer {
  const parts = [WRAP_DOMAIN, keyId, String(version)];
  for (const k of Object.keys(context).sort()) parts.push(k, context[k] as string);
  return associatedData(parts);
}

/** Reads and checks the keyring; undefined when it does not exist and `missingOk`. */
async function readKeyring(file: string, missingOk: boolean): Promise<KeyringContent | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && missingOk) return undefined;
    throw failedPrecondition(`keyring ${file} cannot be read (${code ?? String(err)})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw failedPrecondition(`keyring ${file} is not a file`);
    if ((st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
      throw failedPrecondition(
        `keyring ${file} is readable or writable by group or others (mode ${mode}); it holds keys: chmod 600 ${file}`,
      );
    }
    const text = await handle.readFile("utf8");
    return parseKeyring(file, text);
  } finally {
    await handle.close();
  }
}

function parseKeyring(file: string, text: string): KeyringContent {
  const bad = (why: string) => failedPrecondition(`keyring ${file} is malformed: ${why}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw bad(`not JSON (${(err as Error).message})`);
  }
  const o = json as Partial<KeyringContent> | null;
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw bad("not a JSON object");
  if (o.format !== FORMAT) throw bad(`"format" must be "${FORMAT}"`);
  if (o.version !== 1) throw bad(`"version" must be 1`);
  if (typeof o.keys !== "object" || o.keys === null || Array.isArray(o.keys)) {
    throw bad(`"keys" must be an object`);
  }
  for (const [keyId, set] of Object.entries(o.keys)) {
    const where = `key ${quote(keyId)}`;
    if (typeof set !== "object" || set === null) throw bad(`${where} is not an object`);
    const s = set as Partial<KeySet>;
    if (typeof s.versions !== "object" || s.versions === null) {
      throw bad(`${where} has no "versions" object`);
    }
    for (const [v, k] of Object.entries(s.versions)) {
      if (!/^[1-9][0-9]{0,8}$/.test(v)) throw bad(`${where}: version "${v}" is not a number`);
      if (typeof k !== "string" || Buffer.from(k, "base64").length !== KEY_BYTES) {
        throw bad(`${where} version ${v} is not ${KEY_BYTES} bytes in base64`);
      }
    }
    if (typeof s.current !== "number" || s.versions[String(s.current)] === undefined) {
      throw bad(`${where}: "current" names no version it has`);
    }
  }
  return o as KeyringContent;
}

/** Temp file (0600), fsync, rename over, directory fsync. */
async function writeKeyring(file: string, content: KeyringContent): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(
    dir,
    `.${path.basename(file)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  const handle = await fs.open(temp, "wx", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(content, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  const d = await fs.open(dir, constants.O_RDONLY);
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

/** A lock left by a dead process is broken after this long. */
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 30_000;

/** Runs `fn` holding `<file>.lock` (an atomic mkdir), shared with other processes. */
async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const start = Date.now();
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw failedPrecondition(
          `keyring ${file} cannot be locked (${(err as NodeJS.ErrnoException).code}): its directory must be writable`,
        );
      }
      const st = await fs.stat(lock).catch(() => undefined);
      if (st !== undefined && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await fs.rmdir(lock).catch(() => undefined);
        continue;
      }
      if (Date.now() - start > LOCK_WAIT_MS) {
        throw failedPrecondition(`keyring ${file} is locked by another process (${lock})`);
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rmdir(lock).catch(() => undefined);
  }
}
