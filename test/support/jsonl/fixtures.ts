/**
 * Shared setup for the JSONL engine tests: temp data dirs, a seeded
 * session, and a strict re-read of a file that says whether every line is
 * a valid record.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { SessionLog } from "../../../src/core/session-log.js";
import type { SessionKey } from "../../../src/storage/engine.js";
import { JsonlEngine, type JsonlEngineOptions } from "../../../src/storage/jsonl/jsonl-engine.js";
import { sessionPath } from "../../../src/storage/jsonl/paths.js";
import { type ScanResult, scan } from "../../../src/storage/jsonl/reader.js";
import { appendOf, rootEntry, user } from "../fixtures.js";

export const WS = "default";

export function keyOf(sessionId: string, workspace = WS): SessionKey {
  return { workspace, sessionId };
}

export async function tempDir(prefix = "sessiond-jsonl-"): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export function fileOf(dataDir: string, k: SessionKey, subagent = false): string {
  return sessionPath(dataDir, k.workspace, k.sessionId, subagent);
}

/** Creates a session of `entries` entries: the root and user messages m2..m<entries>. */
export async function seedSession(engine: JsonlEngine, k: SessionKey, entries: number) {
  await engine.create(k, [rootEntry(k.sessionId)]);
  for (let i = 2; i <= entries; i++) {
    await engine.append(k, appendOf([user(`m${i}`, `message number ${i}`)]));
  }
}

/** Runs `fn` with a fresh engine on `dataDir` (a stand-in for a restarted process). */
export async function withEngine<T>(
  dataDir: string,
  fn: (engine: JsonlEngine) => Promise<T>,
  o: Omit<JsonlEngineOptions, "dataDir"> = {},
): Promise<T> {
  const engine = new JsonlEngine({ dataDir, ...o });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

/** Scans a whole file strictly, as a fresh reader would. */
export async function scanFile(file: string): Promise<ScanResult & { log: SessionLog }> {
  const log = new SessionLog(path.basename(file, ".jsonl"));
  const result = scan(await readFile(file), 0, log);
  return { ...result, log };
}

/** Names of the `.broken-*` files next to `file`. */
export async function brokenFiles(file: string): Promise<string[]> {
  const names = await readdir(path.dirname(file));
  return names.filter((n) => n.startsWith(`${path.basename(file)}.broken-`));
}

/** Byte offsets where each line of `buf` starts (plus the end). */
export function lineStarts(buf: Buffer): number[] {
  const starts = [0];
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
}
