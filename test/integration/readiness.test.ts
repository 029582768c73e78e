/**
 * /livez and /readyz as Kubernetes uses them: readiness turns 503 on
 * SIGTERM while a call is still in flight (and stays reachable for
 * --drain-delay-ms before the port closes), and turns 503 when the data
 * dir stops taking writes or PostgreSQL stops answering; liveness stays 200
 * throughout.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { join } from "node:path";
import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { createDatabase, pgSkipReason, sharedPostgres } from "../harness/postgres.js";
import { removeDataDir } from "../harness/server.js";
import { getH1 } from "../support/prometheus.js";
import { user } from "./support/entries.js";
import {
  client,
  EXTERNAL,
  type SessiondProcess,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";

if (EXTERNAL) skipExternal("readiness on SIGTERM and on an unwritable data dir");

let server: SessiondProcess | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) c();
  await server?.kill9();
  if (server) await removeDataDir(server.dataDir);
  server = undefined;
});

/** GET over an HTTP/2 session opened earlier: a connection that outlives the listener. */
function getOn(session: http2.ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "GET", ":path": path });
    let status = 0;
    req.on("response", (h) => {
      status = Number(h[":status"]);
    });
    req.on("data", () => {});
    req.on("end", () => resolve(status));
    req.on("error", reject);
    req.end();
  });
}

describe.skipIf(EXTERNAL)("on SIGTERM", () => {
  it("/readyz turns 503 before the in-flight Append finishes, /livez stays 200, and the Append still succeeds", async () => {
    server = await startSessiond({
      storage: "jsonl",
      args: ["--drain-delay-ms", "60000", "--shutdown-grace-ms", "60000"],
    });
    const s = server;
    const h2 = http2.connect(s.url);
    cleanups.push(() => h2.destroy());
    const c = client(s.url, "grpc", { retry: false, timeoutMs: 120_000 });
    const ws = uniqueWorkspace("ready");
    const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
    expect(await getOn(h2, "/readyz")).toBe(200);

    // Another "process" holds the session's lock (a fresh proper-lockfile
    // lock dir), so the server's Append waits for it: a call in flight
    // for as long as the test wants.
    const dir = join(s.dataDir, ws, "sessions");
    const lock = join(dir, `.${id}.jsonl.lock`);
    await eventually(() => !existsSync(lock), 10_000, "the server to let go of the lock");
    mkdirSync(lock);
    const fresh = setInterval(() => utimesSync(lock, new Date(), new Date()), 500);
    cleanups.push(() => clearInterval(fresh));
    let settled = false;
    const append = c.session
      .append({ workspace: ws, session: id, entries: [user("after the lock")] })
      .finally(() => {
        settled = true;
      });
    await eventually(
      () => existsSync(join(dir, `.${id}.jsonl.wait`)),
      10_000,
      "the Append to wait",
    );

    s.proc.kill("SIGTERM");
    await eventually(async () => (await getOn(h2, "/readyz")) === 503, 10_000, "/readyz 503");
    expect(settled).toBe(false);
    expect(await getOn(h2, "/livez")).toBe(200);
    // A new connection (what a kubelet opens) during the drain delay sees the same.
    expect((await getH1(s.url, "/readyz")).status).toBe(503);
    expect((await getH1(s.url, "/readyz")).body).toContain("draining");
    expect((await getH1(s.url, "/livez")).status).toBe(200);

    clearInterval(fresh);
    rmSync(lock, { recursive: true });
    const res = await append;
    expect(res.headSeq).toBe(2n);
  }, 120_000);
});

describe.skipIf(EXTERNAL)("when the data dir stops taking writes", () => {
  it("/readyz turns 503 while the data dir is replaced by a file, /livez stays 200, and it recovers", async () => {
    server = await startSessiond({ storage: "jsonl" });
    const s = server;
    expect((await getH1(s.url, "/readyz")).status).toBe(200);
    const aside = `${s.dataDir}.aside`;
    renameSync(s.dataDir, aside);
    writeFileSync(s.dataDir, "not a directory\n");
    cleanups.push(() => {
      if (existsSync(aside)) {
        rmSync(s.dataDir, { force: true });
        renameSync(aside, s.dataDir);
      }
    });
    const ready = await getH1(s.url, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toContain("storage unusable (ENOTDIR)");
    expect(ready.body).not.toContain(s.dataDir);
    expect((await getH1(s.url, "/livez")).status).toBe(200);

    rmSync(s.dataDir);
    renameSync(aside, s.dataDir);
    expect((await getH1(s.url, "/readyz")).status).toBe(200);
  }, 60_000);

  it("/readyz turns 503 while the data dir is a read-only mount, and recovers when it is writable again", async (ctx) => {
    server = await startSessiond({ storage: "jsonl" });
    const s = server;
    // As root, permissions never stop a write; a read-only bind mount does.
    try {
      execFileSync("mount", ["--bind", s.dataDir, s.dataDir], { stdio: "pipe" });
    } catch (err) {
      console.warn(
        `\n*** SKIPPED: a read-only data dir needs mount (root with CAP_SYS_ADMIN): ${(err as Error).message.split("\n")[0]} ***\n`,
      );
      ctx.skip();
    }
    cleanups.push(() => execFileSync("umount", [s.dataDir]));
    execFileSync("mount", ["-o", "remount,bind,ro", s.dataDir]);
    const ready = await getH1(s.url, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toContain("storage unusable (EROFS)");
    expect((await getH1(s.url, "/livez")).status).toBe(200);

    execFileSync("mount", ["-o", "remount,bind,rw", s.dataDir]);
    expect((await getH1(s.url, "/readyz")).status).toBe(200);
  }, 60_000);
});

const pgSkip = process.env.CI === "true" ? undefined : pgSkipReason();
if (pgSkip !== undefined) console.warn(`\n*** readiness on PostgreSQL SKIPPED: ${pgSkip} ***\n`);

describe.skipIf(EXTERNAL || pgSkip !== undefined)("when PostgreSQL refuses connections", () => {
  it("/readyz turns 503, /livez stays 200, and it recovers once connections are allowed again", async () => {
    const pg = await sharedPostgres();
    const db = await createDatabase(pg.url, "sessiond_ready");
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    cleanups.push(() => {
      void admin
        .unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`)
        .then(() => admin.end({ timeout: 1 }))
        .then(() => db.drop());
    });
    server = await startSessiond({ args: ["--storage", db.url] });
    const s = server;
    expect((await getH1(s.url, "/readyz")).status).toBe(200);

    await admin.unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
    await admin.unsafe(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}'`,
    );
    const ready = await getH1(s.url, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toMatch(/^not ready: storage (unusable|did not answer in time)/);
    expect((await getH1(s.url, "/livez")).status).toBe(200);

    await admin.unsafe(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
    await eventually(
      async () => (await getH1(s.url, "/readyz")).status === 200,
      30_000,
      "/readyz 200 again",
    );
  }, 90_000);
});
