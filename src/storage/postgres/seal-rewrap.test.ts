import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistant, user } from "../../../test/support/fixtures.js";
import { openPostgres, pgSkip } from "../../../test/support/store-engines.js";
import { isSessiondError } from "../../core/errors.js";
import { textOf } from "../../core/message-text.js";
import { SessionStore } from "../../store/session-store.js";
import { LocalKeyring } from "../keys/local-keyring.js";
import { PostgresEngine } from "./postgres-engine.js";

/**
 * `sessiond keys rewrap` and `sessiond seal` on PostgreSQL
 * (seal-sessions.ts, blobs.ts): after a rotation and a rewrap the old key
 * version can be retired with everything still readable; sealing a
 * workspace written in clear leaves no marker in a pg_dump, is all or
 * nothing per session (an aborted transaction, a killed process), is
 * idempotent, and replicas that cached the clear session read and append
 * sealed afterwards.
 */

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const WS = "old";
const MARK = "SEALPG-MARKER-5d1f";
const BLOB_MARK = "SEALPG-BLOB-MARKER-8c3a";

async function dump(url: string): Promise<string> {
  return (await run("pg_dump", ["--data-only", url], { maxBuffer: 256 << 20 })).stdout;
}

function blobOf(size: number): { data: Buffer; sha256: string } {
  const data = Buffer.alloc(size, 7);
  for (const at of [0, Math.floor(size / 2), size - BLOB_MARK.length]) data.write(BLOB_MARK, at);
  return { data, sha256: createHash("sha256").update(data).digest("hex") };
}

function hex(s: string): string {
  return Buffer.from(s).toString("hex");
}

async function texts(store: SessionStore, id: string): Promise<string[]> {
  const s = await store.open(WS, id);
  return (await s.entries(0, 100)).entries.map((e) =>
    e.kind.case === "message" ? textOf(e.kind.value) : "",
  );
}

/** The keyring file with `version` of `keyId` removed (retired). */
async function retire(file: string, keyId: string, version: number): Promise<void> {
  const k = JSON.parse(await readFile(file, "utf8")) as {
    keys: Record<string, { versions: Record<string, string> }>;
  };
  delete k.keys[keyId]?.versions[String(version)];
  await writeFile(file, JSON.stringify(k), { mode: 0o600 });
}

if (pgSkip !== undefined) {
  it.skip(`PostgreSQL seal and rewrap tests (skipped: ${pgSkip})`, () => {});
} else {
  describe("seal and rewrap on PostgreSQL", () => {
    let keyDir: string;
    let keyFile: string;
    let keys: LocalKeyring;
    const engines: PostgresEngine[] = [];
    let url: string;
    let admin: Awaited<ReturnType<typeof openPostgres>>["admin"];

    const engine = async (
      encryption?: ConstructorParameters<typeof PostgresEngine>[0]["encryption"],
      insertChunk?: number,
    ) => {
      const e = await PostgresEngine.open({ url, encryption, insertChunk });
      engines.push(e);
      return e;
    };

    beforeEach(async () => {
      keyDir = await mkdtemp(path.join(tmpdir(), "sessiond-pgseal-"));
      keyFile = path.join(keyDir, "keyring.json");
      keys = await LocalKeyring.open(keyFile, { create: true });
      const o = await openPostgres();
      engines.push(o.engine);
      url = o.url;
      admin = o.admin;
    });

    afterEach(async () => {
      for (const e of engines.splice(0)) await e.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    it("after rotate and rewrap every session and the blob key are on the new version; the old one can be retired", async () => {
      const sealedEngine = await engine({ keys, workspaces: [WS] });
      const store = new SessionStore(sealedEngine);
      for (const id of ["r1", "r2"]) {
        await store.create({ workspace: WS, sessionId: id });
        await (await store.open(WS, id)).append([user(`u-${id}`, `${MARK} ${id}`)]);
      }
      const blob = blobOf(150_000);
      await sealedEngine.blobs.put(WS, blob.sha256, blob.data);
      const before = await dump(url);
      expect(await keys.rotate(WS)).toBe(2);

      const rewrapper = await engine({ keys, workspaces: [] });
      expect(await rewrapper.rewrap({ workspace: WS, sessionId: "r1" })).toEqual({
        from: 1,
        to: 2,
      });
      expect(await rewrapper.rewrap({ workspace: WS, sessionId: "r2" })).toEqual({
        from: 1,
        to: 2,
      });
      expect(await rewrapper.blobs.rewrapKey(WS)).toEqual({ from: 1, to: 2 });
      // Idempotent.
      expect(await rewrapper.rewrap({ workspace: WS, sessionId: "r1" })).toEqual({
        from: 2,
        to: 2,
      });
      expect(await rewrapper.blobs.rewrapKey(WS)).toEqual({ from: 2, to: 2 });
      const versions = await admin<{ v: number }[]>`
        SELECT key_version AS v FROM sessiond_session_keys WHERE workspace = ${WS}
        UNION ALL SELECT key_version FROM sessiond_blob_keys WHERE workspace = ${WS}`;
      expect(versions.map((r) => r.v)).toEqual([2, 2, 2]);
      // No entry was rewritten: the entry rows dump the same.
      const rowsOf = (d: string) =>
        d.split("\n").filter((l) => l.startsWith(`${WS}\t`) && l.includes('"@sealed"'));
      expect(rowsOf(await dump(url))).toEqual(rowsOf(before));

      // The session running meanwhile (cached key) keeps appending and reading.
      await (await store.open(WS, "r1")).append([assistant("a-r1", "after the rewrap")]);

      await retire(keyFile, WS, 1);
      const retired = await LocalKeyring.open(keyFile);
      const reader = new SessionStore(await engine({ keys: retired, workspaces: [WS] }));
      expect(await texts(reader, "r1")).toEqual(["", `${MARK} r1`, "after the rewrap"]);
      expect(await texts(reader, "r2")).toEqual(["", `${MARK} r2`]);
      const got = await reader.engine.blobs.read(WS, blob.sha256, 0, blob.data.length);
      expect(Buffer.from(got).equals(blob.data)).toBe(true);
    });

    it("without the rewrap, retiring the old version leaves the sessions unreadable (the control)", async () => {
      const store = new SessionStore(await engine({ keys, workspaces: [WS] }));
      await store.create({ workspace: WS, sessionId: "r1" });
      await (await store.open(WS, "r1")).append([user("u1", MARK)]);
      await keys.rotate(WS);
      await retire(keyFile, WS, 1);
      const reader = new SessionStore(
        await engine({ keys: await LocalKeyring.open(keyFile), workspaces: [WS] }),
      );
      const err = await texts(reader, "r1").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    });

    it("seal: a workspace written in clear is sealed (no marker in pg_dump), reads back the same, twice is a no-op", async () => {
      const clearEngine = await engine();
      const clearStore = new SessionStore(clearEngine);
      for (const id of ["c1", "c2"]) {
        await clearStore.create({ workspace: WS, sessionId: id, title: "kept title" });
        await (await clearStore.open(WS, id)).append([
          user(`u-${id}`, `${MARK} user ${id}`),
          assistant(`a-${id}`, `${MARK} assistant ${id}`),
        ]);
      }
      const blob = blobOf(BLOB_SIZE);
      await clearEngine.blobs.put(WS, blob.sha256, blob.data);
      // A replica with the keyring has c1 cached in clear before the seal.
      const replica = new SessionStore(await engine({ keys, workspaces: [] }));
      const c1Before = await texts(replica, "c1");
      expect((await dump(url)).includes(MARK)).toBe(true);
      // A watcher of c1 on that replica, past its three entries.
      const watch = (await replica.open(WS, "c1")).watch();
      const seen: string[] = [];
      while (seen.length < 3) {
        const ev = (await watch.next()).value;
        if (ev?.type === "entry") seen.push(ev.entry.id);
      }

      // One row per UPDATE statement: a session's payloads in several statements, one transaction.
      const sealer = await engine({ keys, workspaces: [] }, 1);
      expect(await sealer.seal({ workspace: WS, sessionId: "c1" })).toEqual({
        sessionId: "c1",
        result: "sealed",
        records: 2,
      });
      expect(await sealer.seal({ workspace: WS, sessionId: "c2" })).toMatchObject({
        result: "sealed",
      });
      expect(await sealer.blobs.sealExisting(WS)).toBe(1);
      const text = await dump(url);
      expect(text).not.toContain(MARK);
      expect(text).not.toContain(BLOB_MARK);
      expect(text).not.toContain(hex(BLOB_MARK));
      expect(text).toContain("kept title");

      // The replica reads the same, and its next append is sealed too.
      expect(await texts(replica, "c1")).toEqual(c1Before);
      await (await replica.open(WS, "c1")).append([user("later", `${MARK} later`)]);
      expect(await dump(url)).not.toContain(MARK);
      // The watcher goes on: the next entry, nothing replayed or withheld.
      let ev = (await watch.next()).value;
      while (ev?.type === "heartbeat") ev = (await watch.next()).value;
      expect(ev?.type === "entry" ? [ev.entry.id, ev.entry.seq] : ev?.type).toEqual(["later", 4n]);
      await watch.return(undefined);
      const fresh = new SessionStore(await engine({ keys, workspaces: [] }));
      expect(await texts(fresh, "c1")).toEqual([...c1Before, `${MARK} later`]);
      const got = await fresh.engine.blobs.read(WS, blob.sha256, 1000, 70_000);
      expect(Buffer.from(got).equals(blob.data.subarray(1000, 71_000))).toBe(true);

      expect(await sealer.seal({ workspace: WS, sessionId: "c1" })).toEqual({
        sessionId: "c1",
        result: "already",
      });
      expect(await sealer.blobs.sealExisting(WS)).toBe(0);
      // Without a keyring nothing can be sealed.
      const plain = await engine();
      const refused = await plain.seal({ workspace: WS, sessionId: "c1" }).catch((e) => e);
      expect(isSessiondError(refused, "FAILED_PRECONDITION")).toBe(true);
      const missing = await sealer.seal({ workspace: WS, sessionId: "nope" }).catch((e) => e);
      expect(isSessiondError(missing, "NOT_FOUND")).toBe(true);
    });

    it("seal: a transaction aborted before COMMIT leaves the session wholly in clear, with no key row; the next run seals it", async () => {
      const clearStore = new SessionStore(await engine());
      await clearStore.create({ workspace: WS, sessionId: "c1" });
      await (await clearStore.open(WS, "c1")).append([user("u1", `${MARK} one`)]);
      const sealer = await engine({ keys, workspaces: [] });
      const err = await sealer
        .seal(
          { workspace: WS, sessionId: "c1" },
          {
            beforeCommit: () => {
              throw new Error("crash before COMMIT");
            },
          },
        )
        .catch((e: unknown) => e as Error);
      expect(String(err)).toContain("crash before COMMIT");
      expect(await dump(url)).toContain(`${MARK} one`);
      const [n] = await admin<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM sessiond_session_keys`;
      expect(n?.n).toBe(0);
      expect(await texts(new SessionStore(await engine()), "c1")).toEqual(["", `${MARK} one`]);
      expect(await sealer.seal({ workspace: WS, sessionId: "c1" })).toMatchObject({
        result: "sealed",
      });
      expect(await dump(url)).not.toContain(MARK);
    });

    it("seal: a process killed inside a session's transaction leaves the sessions sealed before it sealed and the rest in clear, all readable", async () => {
      const clearStore = new SessionStore(await engine());
      for (const id of ["k1", "k2", "k3"]) {
        await clearStore.create({ workspace: WS, sessionId: id });
        await (await clearStore.open(WS, id)).append([user(`u-${id}`, `${MARK} ${id}`)]);
      }
      // A child process seals k1, k2, k3 and kills itself (SIGKILL) inside k2's transaction.
      const src = path.resolve(HERE, "postgres-engine.ts");
      const ring = path.resolve(HERE, "../keys/local-keyring.ts");
      const code = `
        import { PostgresEngine } from ${JSON.stringify(src)};
        import { LocalKeyring } from ${JSON.stringify(ring)};
        const keys = await LocalKeyring.open(${JSON.stringify(keyFile)});
        const e = await PostgresEngine.open({ url: ${JSON.stringify(url)}, encryption: { keys, workspaces: [] } });
        for (const id of ["k1", "k2", "k3"]) {
          await e.seal({ workspace: ${JSON.stringify(WS)}, sessionId: id }, {
            beforeCommit: (k) => { if (k.sessionId === "k2") process.kill(process.pid, "SIGKILL"); },
          });
        }`;
      const signal = await new Promise<NodeJS.Signals | null>((done) => {
        const child = spawn(
          process.execPath,
          ["--import", "tsx", "--input-type=module", "-e", code],
          {
            stdio: ["ignore", "ignore", "inherit"],
          },
        );
        child.once("exit", (_code, sig) => done(sig));
      });
      expect(signal).toBe("SIGKILL");
      const text = await dump(url);
      expect(text).not.toContain(`${MARK} k1`);
      expect(text).toContain(`${MARK} k2`);
      expect(text).toContain(`${MARK} k3`);
      const keyRows = await admin<{ session_id: string }[]>`
        SELECT session_id FROM sessiond_session_keys ORDER BY session_id`;
      expect(keyRows.map((r) => r.session_id)).toEqual(["k1"]);
      const reader = new SessionStore(await engine({ keys, workspaces: [] }));
      for (const id of ["k1", "k2", "k3"])
        expect(await texts(reader, id)).toEqual(["", `${MARK} ${id}`]);
      const sealer = await engine({ keys, workspaces: [] });
      const outcomes = [];
      for (const id of ["k1", "k2", "k3"])
        outcomes.push((await sealer.seal({ workspace: WS, sessionId: id })).result);
      expect(outcomes).toEqual(["already", "sealed", "sealed"]);
      expect(await dump(url)).not.toContain(MARK);
    }, 60_000);

    it("seal refuses a session with sealed payloads but no key row (a new key would not open them)", async () => {
      const store = new SessionStore(await engine({ keys, workspaces: [WS] }));
      await store.create({ workspace: WS, sessionId: "s1" });
      await (await store.open(WS, "s1")).append([user("u1", MARK)]);
      await admin`DELETE FROM sessiond_session_keys WHERE session_id = 's1'`;
      const sealer = await engine({ keys, workspaces: [] });
      const err = await sealer.seal({ workspace: WS, sessionId: "s1" }).catch((e) => e);
      expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
      expect(String(err)).toContain("no key row");
    });
  });
}

/** Over two 1 MiB chunk rows. */
const BLOB_SIZE = 1024 * 1024 + 200_000;
