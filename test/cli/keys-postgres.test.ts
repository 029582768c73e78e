import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-text.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { LocalKeyring } from "../../src/storage/keys/local-keyring.js";
import { PostgresEngine } from "../../src/storage/postgres/index.js";
import { SessionStore } from "../../src/store/session-store.js";
import { runCli as runCliRaw } from "../harness/cli.js";
import { createDatabase, pgSkipReason, sharedPostgres } from "../harness/postgres.js";
import { removeDataDir } from "../harness/server.js";
import { assistant, user } from "../support/fixtures.js";

/**
 * Encryption at rest on PostgreSQL through the real commands (issue 41):
 * `sessiond copy --keyring --encrypt-all` from a sealed JSONL data dir to
 * PostgreSQL and back keeps every session sealed on both sides and reads
 * the same; `sessiond seal --storage` seals a database's clear sessions;
 * `sessiond keys rewrap --storage` moves them to a rotated key version.
 */

const MARKER = "MARKER-PGKEYS-3e9d";
const skip = pgSkipReason();
if (skip !== undefined) console.warn(`\n*** keys-postgres.test.ts SKIPPED: ${skip} ***\n`);

const dumpOf = async (url: string) =>
  (await promisify(execFile)("pg_dump", ["--data-only", url], { maxBuffer: 64 << 20 })).stdout;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((n) => join(dir, String(n)))
    .filter((f) => statSync(f).isFile());
}

/** The commands, with room for a loaded box (each starts a process and connects). */
const runCli = (args: string[]) => runCliRaw(args, { timeoutMs: 60_000 });

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

let db: { url: string; drop(): Promise<void> } | undefined;
let keyring: string;

beforeAll(async () => {
  if (skip !== undefined) return;
  db = await createDatabase((await sharedPostgres()).url, "sessiond_pgkeys");
  keyring = join(tempDir("sessiond-pgkeys-ring-"), "keyring.json");
}, 60_000);

afterAll(async () => {
  await db?.drop();
  for (const d of dirs) await removeDataDir(d);
});

async function textsOf(store: SessionStore, ws: string, id: string): Promise<string[]> {
  const s = await store.open(ws, id);
  return (await s.entries(0, 100)).entries.map((e) =>
    e.kind.case === "message" ? textOf(e.kind.value) : "",
  );
}

describe.skipIf(skip !== undefined)("keys on PostgreSQL through the CLI", () => {
  it("copy JSONL (sealed) -> PostgreSQL -> JSONL keeps every session sealed and the same", async () => {
    const url = db?.url as string;
    const source = tempDir("sessiond-pgkeys-src-");
    const keys = await LocalKeyring.open(keyring, { create: true });
    const src = new SessionStore(
      new JsonlEngine({ dataDir: source, encryption: { keys, workspaces: "all" } }),
    );
    for (const id of ["s1", "s2"]) {
      await src.create({ workspace: "team", sessionId: id, title: `title ${id}` });
      await (await src.open("team", id)).append([
        user(`u-${id}`, `${MARKER} user ${id}`),
        assistant(`a-${id}`, `${MARKER} assistant ${id}`),
      ]);
    }
    const want = [await textsOf(src, "team", "s1"), await textsOf(src, "team", "s2")];
    await src.close();

    const toPg = await runCli([
      "copy",
      "--from",
      source,
      "--to",
      url,
      "--keyring",
      keyring,
      "--encrypt-all",
    ]);
    expect(toPg.stderr).toBe("");
    expect(toPg.code).toBe(0);
    const dumped = await dumpOf(url);
    expect(dumped).toContain("title s1");
    expect(dumped).not.toContain(MARKER);
    expect(dumped).toContain('"message":{"@sealed":"');

    const back = tempDir("sessiond-pgkeys-back-");
    const toJsonl = await runCli([
      "copy",
      "--from",
      url,
      "--to",
      back,
      "--keyring",
      keyring,
      "--encrypt-all",
    ]);
    expect(toJsonl.stderr).toBe("");
    expect(toJsonl.code).toBe(0);
    const files = filesUnder(back);
    expect(files.filter((f) => f.endsWith(".key")).length).toBe(2);
    for (const f of files) expect(readFileSync(f).includes(MARKER)).toBe(false);

    const again = new SessionStore(
      new JsonlEngine({ dataDir: back, encryption: { keys, workspaces: [] } }),
    );
    expect([await textsOf(again, "team", "s1"), await textsOf(again, "team", "s2")]).toEqual(want);
    await again.close();
  }, 300_000);

  it("seal --storage seals a database's clear sessions; keys rewrap --storage moves them to the new version", async () => {
    const url = db?.url as string;
    const plain = await PostgresEngine.open({ url });
    const store = new SessionStore(plain);
    for (const id of ["c1", "c2"]) {
      await store.create({ workspace: "old", sessionId: id });
      await (await store.open("old", id)).append([user(`u-${id}`, `${MARKER} clear ${id}`)]);
    }
    await plain.close();
    expect(await dumpOf(url)).toContain(`${MARKER} clear`);

    const base = ["--keyring", keyring, "--storage", url, "--workspace", "old"];
    const sealed = await runCli(["seal", ...base]);
    expect(sealed.stderr).toBe("");
    expect(sealed.stdout).toBe("c1: sealed (1 record)\nc2: sealed (1 record)\nblobs: 0 sealed\n");
    expect(sealed.code).toBe(0);
    expect(await dumpOf(url)).not.toContain(MARKER);
    expect((await runCli(["seal", ...base])).stdout).toBe(
      "c1: sealed already\nc2: sealed already\nblobs: 0 sealed\n",
    );

    expect(
      (await runCli(["keys", "rotate", "--keyring", keyring, "--workspace", "old"])).code,
    ).toBe(0);
    const rewrap = await runCli(["keys", "rewrap", ...base]);
    expect(rewrap.stderr).toBe("");
    expect(rewrap.stdout).toBe("c1: version 1 -> 2\nc2: version 1 -> 2\n");
    expect((await runCli(["keys", "rewrap", ...base])).stdout).toBe(
      "c1: version 2 already\nc2: version 2 already\n",
    );
    const both = await runCli(["seal", ...base, "--data-dir", "/tmp/x"]);
    expect(both.code).toBe(2);

    const keys = await LocalKeyring.open(keyring);
    const reader = new SessionStore(
      await PostgresEngine.open({ url, encryption: { keys, workspaces: [] } }),
    );
    expect(await textsOf(reader, "old", "c2")).toEqual(["", `${MARKER} clear c2`]);
    await reader.close();
  }, 300_000);
});
