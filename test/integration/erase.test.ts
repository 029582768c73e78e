/**
 * EraseSessions over a real server (both fronts run the handlers of
 * src/server/rpc): a session and its subagents read as erased with their
 * tree kept, the content leaves the data dir, the audit record holds no
 * content; and the CLI's `sessiond erase` by tag, with its refusals. On
 * PostgreSQL (SESSIOND_TEST_STORAGE=postgres) the same, with a
 * `pg_dump --data-only` of the server's database in place of the data dir.
 */
import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Role, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { runCli } from "../harness/cli.js";
import { client, serverUnderTest, uniqueWorkspace } from "./support/server.js";

const MARK = "ERASE-WIREMARKER-8080";

let srv: Awaited<ReturnType<typeof serverUnderTest>>;

beforeAll(async () => {
  srv = await serverUnderTest();
});

afterAll(async () => {
  await srv?.close();
});

const text = (id: string, role: Role, value: string) => ({
  id,
  kind: {
    case: "message" as const,
    value: { role, content: [{ part: { case: "text" as const, value } }] },
  },
});

async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const file = join(dir, name);
    if ((await stat(file)).isFile() && (await readFile(file)).includes(needle)) out.push(name);
  }
  return out;
}

/** Whether `pg_dump --data-only` of the database `url` holds `needle`. */
async function dumpHolds(url: string, needle: string): Promise<boolean> {
  const { stdout } = await promisify(execFile)("pg_dump", ["--data-only", url], {
    maxBuffer: 256 << 20,
  });
  return stdout.includes(needle);
}

describe.each(["grpc", "connect"] as const)("EraseSessions over %s", (protocol) => {
  test("erases a session with its subagent, keeps the tree, leaves no content in the files", async () => {
    const c = client(srv.url, protocol);
    const ws = uniqueWorkspace("erase");
    await c.store.createSession({ workspace: ws, sessionId: "par", title: "t" });
    await c.session.append({
      workspace: ws,
      session: "par",
      entries: [text("u1", Role.USER, `card ${MARK}`), text("a1", Role.ASSISTANT, "ok")],
    });
    await c.store.createSession({
      workspace: ws,
      sessionId: "kid",
      parentSessionId: "par",
      agentType: "x",
    });
    await c.session.append({
      workspace: ws,
      session: "kid",
      entries: [text("k1", Role.USER, `kid ${MARK}`)],
    });
    const onPg = srv.local?.storage.startsWith("postgres") === true;
    if (onPg) expect(await dumpHolds(srv.local?.storage ?? "", MARK)).toBe(true);
    const res = await c.store.eraseSessions({
      workspace: ws,
      sessionIds: ["par"],
      by: "dpo",
      why: "request 1",
    });
    expect(res.sessionIds).toEqual(["par", "kid"]);
    expect([res.entries, res.newlyErased]).toEqual([3n, 3n]);
    const audit = JSON.parse(res.auditRecord);
    expect([audit.by, audit.why, audit.sessions, audit.request]).toEqual([
      "dpo",
      "request 1",
      2,
      { sessionIds: ["par"] },
    ]);
    expect(res.auditRecord).not.toContain(MARK);
    const entries = (await c.session.getEntries({ workspace: ws, session: "par", afterSeq: 0n }))
      .entries;
    expect(entries.map((e) => [e.id, e.seq, e.withheld?.reason])).toEqual([
      [entries[0]?.id, 1n, undefined],
      ["u1", 2n, WithheldReason.ERASED],
      ["a1", 3n, WithheldReason.ERASED],
    ]);
    expect((await c.store.searchEntries({ workspace: ws, query: "WIREMARKER" })).hits).toEqual([]);
    if (srv.local !== undefined) {
      expect(await filesHolding(srv.local.dataDir, MARK)).toEqual([]);
      if (onPg) expect(await dumpHolds(srv.local.storage, MARK)).toBe(false);
    }
    const again = await c.store.eraseSessions({ workspace: ws, sessionIds: ["par"], by: "dpo" });
    expect([again.entries, again.newlyErased]).toEqual([3n, 0n]);
  });
});

test("sessiond erase: by tag, --by and --why required, exactly one choice", async () => {
  const c = client(srv.url, "grpc");
  const ws = uniqueWorkspace("erase-cli");
  await c.store.createSession({ workspace: ws, sessionId: "s42", tags: { user: "42" } });
  await c.session.append({
    workspace: ws,
    session: "s42",
    entries: [text("m1", Role.USER, `hello ${MARK}`)],
  });
  await c.store.createSession({ workspace: ws, sessionId: "s7", tags: { user: "7" } });
  await c.session.append({
    workspace: ws,
    session: "s7",
    entries: [text("m2", Role.USER, "kept")],
  });
  const base = ["--server", srv.url, "-w", ws, "erase"];
  const noBy = await runCli([...base, "--tag", "user=42", "--why", "w"]);
  expect(noBy.code).toBe(2);
  expect(noBy.stderr).toContain("--by");
  const both = await runCli([...base, "s42", "--all", "--by", "dpo", "--why", "w"]);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("exactly one");
  const r = await runCli([...base, "--tag", "user=42", "--by", "dpo", "--why", "user 42 asked"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("erased s42\n1 session(s), 1 entries erased (1 now)\n");
  const got = async (id: string) =>
    (await c.session.getEntries({ workspace: ws, session: id, afterSeq: 0n })).entries[1];
  expect((await got("s42"))?.withheld?.reason).toBe(WithheldReason.ERASED);
  expect((await got("s7"))?.withheld).toBeUndefined();
});
