import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Entry, EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { SessionMetaSchema, SessionStateSchema, View } from "../../gen/sessiond/v1/session_pb.js";
import { copySessions } from "../../src/cli/copy-sessions.js";
import { describeSpec, parseStorageSpec, sameStorage } from "../../src/cli/copy-storage.js";
import type { SessionKey, StorageEngine } from "../../src/storage/engine.js";
import { JsonlEngine } from "../../src/storage/jsonl/index.js";
import { MemoryEngine } from "../../src/storage/memory.js";
import { PostgresEngine } from "../../src/storage/postgres/index.js";
import { SessionStore } from "../../src/store/session-store.js";
import { createDatabase, type PgServer, pgSkipReason, startPostgres } from "../harness/postgres.js";
import { BIN, REPO, removeDataDir } from "../harness/server.js";
import {
  assistant,
  branchSummary,
  compaction,
  custom,
  label,
  modelChange,
  thinkingLevel,
  toolResult,
  user,
} from "../support/fixtures.js";

/**
 * `sessiond copy`: the real CLI as a child process, copying a JSONL data
 * dir (built through the store API: branches, compactions, forks,
 * subagents, two workspaces) to PostgreSQL and back to a fresh data dir,
 * and to another data dir; what the store reads afterwards (raw entries,
 * metadata, and the fold at every entry in both views) must be identical.
 */

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sessiond(args: string[], timeoutMs = 60_000): Promise<Result> {
  return new Promise<Result>((done, fail) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      fail(new Error(`sessiond ${args.join(" ")} timed out\n${stdout}\n${stderr}`));
    }, timeoutMs);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

const temps: string[] = [];
function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sessiond-copy-${name}-`));
  temps.push(dir);
  return dir;
}

/** A store over `engine` with a clock that moves one second per call (distinct, ordered times). */
function storeOn(engine: StorageEngine): SessionStore {
  let ms = Date.UTC(2026, 4, 1, 8, 0, 0);
  const now = () => {
    ms += 1000;
    return new Date(ms);
  };
  return new SessionStore(engine, { now });
}

/** What the fixture holds, for the tests to name sessions. */
interface Fixture {
  main: string;
  fork: string;
  sub: string;
  subsub: string;
  /** Three-entry session of workspace beta (the one the conflict/corrupt tests use). */
  beta: string;
  sessions: number;
}

/**
 * Workspace "alpha": a session with model/thinking changes, a tool call,
 * a label, a compaction, a rewind before the compaction and a new branch
 * with a branch summary and a custom entry; a fork of it; a subagent and
 * a sub-subagent. Workspace "beta": a session with a reset and a new
 * branch, and one holding only its root.
 */
async function buildFixture(dir: string): Promise<Fixture> {
  const engine = new JsonlEngine({ dataDir: dir });
  const store = storeOn(engine);
  try {
    const { session: m } = await store.create({
      workspace: "alpha",
      title: "main",
      cwd: "/src/app",
      metadata: { team: "infra", tags: ["a", "b"], n: 3 },
    });
    const main = await store.open("alpha", m.id);
    await main.append([modelChange("mc1", "claude", "anthropic"), thinkingLevel("th1", "high")]);
    await main.append([user("u1", "what is 37*19?"), assistant("a1", "let me compute", ["c1"])]);
    await main.append([toolResult("t1", "c1"), assistant("a2", "703")]);
    await main.append(label("lb1", "checkpoint"));
    await main.append([user("u2", "and 703*2?"), assistant("a3", "1406")]);
    await main.append(compaction("cp1", "computed 37*19=703", ["u1", "a1", "t1", "a2"]));
    await main.append([user("u3", "thanks"), assistant("a4", "you're welcome")]);
    // Back before the compaction, and a new branch from there.
    await main.rewind("a2", { allowBeforeCompaction: true });
    await main.append([
      branchSummary("bs1", "asked for doubling, got 1406", "a4"),
      user("u2b", "and 703+1?"),
      assistant("a3b", "704"),
      custom("cu1", "app.ui", { pinned: true, width: 80 }),
      modelChange("mc2", "gpt", "openai"),
    ]);
    const fork = await store.fork("alpha", m.id, { entry: "a3", title: "the fork" });
    await (await store.open("alpha", fork.id)).append(user("fu1", "forked question"));
    const { session: sub } = await store.create({
      workspace: "alpha",
      parentSessionId: m.id,
      agentType: "researcher",
      title: "sub",
    });
    await (await store.open("alpha", sub.id)).append([
      user("su1", "look this up"),
      assistant("sa1", "found it"),
    ]);
    const { session: subsub } = await store.create({
      workspace: "alpha",
      parentSessionId: sub.id,
      agentType: "checker",
    });
    await (await store.open("alpha", subsub.id)).append(user("ssu1", "check it"));

    const { session: b } = await store.create({ workspace: "beta", sessionId: "beta-one" });
    const beta = await store.open("beta", b.id);
    await beta.append([user("bu1", "hello"), assistant("ba1", "hi")]);
    await beta.reset();
    await beta.append(user("bu2", "fresh start"));
    await store.create({ workspace: "beta", sessionId: "beta-empty", title: "only a root" });
    return { main: m.id, fork: fork.id, sub: sub.id, subsub: subsub.id, beta: b.id, sessions: 6 };
  } finally {
    await store.close();
  }
}

/**
 * Everything a reader gets from a storage, per "workspace/session": the
 * raw entries (canonical bytes), the metadata, and the fold in both views
 * at the current leaf and at every entry that can be folded (every tree
 * leaf among them). Two storages holding the same data give equal snapshots.
 */
type Snapshot = Record<
  string,
  { entries: string[]; meta: string; leaves: string[]; states: Record<string, string> }
>;

async function snapshot(engine: StorageEngine): Promise<Snapshot> {
  const store = new SessionStore(engine);
  const out: Snapshot = {};
  for (const workspace of (await engine.workspaces()).sort()) {
    for (const id of (await engine.listIds(workspace)).sort()) {
      const session = await store.open(workspace, id);
      const entries = (await session.entries(0, 1000)).entries;
      const meta = await store.get(workspace, id);
      // A Leaf entry's parent only records the previous leaf: it is not a tree edge.
      const parents = new Set(entries.filter((e) => e.kind.case !== "leaf").map((e) => e.parentId));
      const leaves = entries
        .filter((e) => !parents.has(e.id) && e.kind.case !== "leaf")
        .map((e) => e.id);
      const states: Record<string, string> = {};
      const points = [undefined, ...entries.filter((e) => e.kind.case !== "leaf").map((e) => e.id)];
      for (const at of points) {
        for (const view of [View.CONTEXT, View.HISTORY]) {
          const state = await session.state({ atEntryId: at, view });
          states[`${at ?? "(current)"}/${View[view]}`] = toJsonString(SessionStateSchema, state);
        }
      }
      out[`${workspace}/${id}`] = {
        entries: entries.map((e) => toJsonString(EntrySchema, e)),
        meta: toJsonString(SessionMetaSchema, meta),
        leaves,
        states,
      };
    }
  }
  return out;
}

async function snapshotDir(dir: string): Promise<Snapshot> {
  const engine = new JsonlEngine({ dataDir: dir });
  try {
    return await snapshot(engine);
  } finally {
    await engine.close();
  }
}

/** The lines of stdout that report a session with this label. */
function linesOf(stdout: string, labelText: string): string[] {
  return stdout.split("\n").filter((l) => l.startsWith(labelText));
}

let source: string;
let fixture: Fixture;
let before: Snapshot;

beforeAll(async () => {
  source = tempDir("src");
  fixture = await buildFixture(source);
  before = await snapshotDir(source);
});

afterAll(() => {
  for (const dir of temps) removeDataDir(dir);
});

describe("the fixture", () => {
  it("holds what the copy tests rely on", () => {
    const keys = Object.keys(before);
    expect(keys).toHaveLength(fixture.sessions);
    expect(keys.filter((k) => k.startsWith("alpha/"))).toHaveLength(4);
    const main = before[`alpha/${fixture.main}`];
    // Two branches from a2 (a3…a4 abandoned, bs1…mc2 current), so at least two leaves.
    expect(main?.leaves).toEqual(expect.arrayContaining(["a4", "mc2"]));
    expect(main?.states["(current)/CONTEXT"]).toContain("Summary of an abandoned branch");
    expect(main?.states["a4/CONTEXT"]).toContain("Previous conversation summary");
    expect(existsSync(join(source, "alpha", "sessions", "subagents", `${fixture.sub}.jsonl`))).toBe(
      true,
    );
  });
});

describe("sessiond copy between JSONL data dirs", () => {
  it("copies every session byte for byte, verifies it, and a second run skips them all", async () => {
    const target = join(tempDir("dst"), "data");
    const r = await sessiond(["copy", "--from", source, "--to", `jsonl:${target}`, "--verbose"]);
    expect(r.stderr).toBe("");
    expect(r.code, r.stdout).toBe(0);
    expect(linesOf(r.stdout, "COPIED")).toHaveLength(fixture.sessions);
    expect(r.stdout).toContain(`read 2 workspaces, 6 sessions`);
    expect(r.stdout).toContain("6 copied, 0 skipped (identical), 0 caught up, 0 conflicts");
    expect(r.stdout).toMatch(
      /verified 6 sessions \(\d+ entries\) read back from the target: 0 mismatches/,
    );
    expect(await snapshotDir(target)).toEqual(before);
    // The same records: seqs and payload bytes (a copy is written by one
    // create, so the source's write boundaries, the `more` markers, differ).
    const rel = join("alpha", "sessions", `${fixture.main}.jsonl`);
    expect(records(join(target, rel))).toEqual(records(join(source, rel)));
    const subRel = join("alpha", "sessions", "subagents", `${fixture.subsub}.jsonl`);
    expect(existsSync(join(target, subRel))).toBe(true);

    const again = await sessiond(["copy", "--from", source, "--to", target]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain("0 copied, 6 skipped (identical)");
    expect(again.stdout).toContain("0 entries written");
    expect(linesOf(again.stdout, "IDENTICAL")).toHaveLength(0); // only problems without --verbose
  });

  it("catches up a session that grew in the source since the last copy", async () => {
    const src = tempDir("grow");
    cpSync(source, src, { recursive: true });
    const target = tempDir("grow-dst");
    expect((await sessiond(["copy", "--from", src, "--to", target])).code).toBe(0);
    const engine = new JsonlEngine({ dataDir: src });
    const store = storeOn(engine);
    await (await store.open("beta", fixture.beta)).append([
      user("late1", "one more"),
      assistant("late2", "sure"),
    ]);
    await store.close();
    const r = await sessiond(["copy", "--from", src, "--to", target, "--json"]);
    expect(r.code, r.stdout).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const grown = lines.find((l) => l.sessionId === fixture.beta);
    expect(grown).toMatchObject({ workspace: "beta", status: "caught_up", written: 2 });
    expect(lines.at(-1).summary).toMatchObject({ caughtUp: 1, identical: 5, written: 2 });
    expect(await snapshotDir(target)).toEqual(await snapshotDir(src));
  });

  it("carries share links: a link made on the source reads on the target, and a later revoke follows", async () => {
    const src = tempDir("share-src");
    cpSync(source, src, { recursive: true });
    const s1 = storeOn(new JsonlEngine({ dataDir: src }));
    const token = (await s1.shares.create({ workspace: "beta", session: fixture.beta, by: "ana" }))
      .token;
    await s1.close();
    const target = tempDir("share-dst");
    const r = await sessiond(["copy", "--from", src, "--to", target]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain("share links: 1 copied, 0 already in the target");
    const t1 = storeOn(new JsonlEngine({ dataDir: target }));
    const snap = await t1.shares.read(token);
    expect(snap.entries.at(-1)?.id).toBe("bu2");
    expect(snap.share.by).toBe("ana");
    await t1.close();
    const s2 = storeOn(new JsonlEngine({ dataDir: src }));
    await s2.shares.revoke("beta", token);
    await s2.close();
    const again = await sessiond(["copy", "--from", src, "--to", target]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain(
      "share links: 0 copied, 1 already in the target (1 revoked there since)",
    );
    const t2 = storeOn(new JsonlEngine({ dataDir: target }));
    await expect(t2.shares.read(token)).rejects.toThrow(/share not found/);
    await t2.close();
  });

  it("copies only the workspaces asked for", async () => {
    const target = tempDir("ws");
    const r = await sessiond(["copy", "--from", source, "--to", target, "--workspace", "beta"]);
    expect(r.code, r.stdout).toBe(0);
    const snap = await snapshotDir(target);
    expect(Object.keys(snap).sort()).toEqual(["beta/beta-empty", "beta/beta-one"]);
    expect(snap["beta/beta-one"]).toEqual(before["beta/beta-one"]);
  });

  it("reports a session of the same id that differs in the target as a conflict and leaves it alone", async () => {
    const target = tempDir("conflict");
    const seeded = storeOn(new JsonlEngine({ dataDir: target }));
    await seeded.create({ workspace: "beta", sessionId: "beta-one", title: "someone else's" });
    await seeded.close();
    const theirs = await snapshotDir(target);

    const r = await sessiond(["copy", "--from", source, "--to", target]);
    expect(r.code).toBe(1);
    const conflicts = linesOf(r.stdout, "CONFLICT");
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatch(
      /^CONFLICT {3}beta\/beta-one {2}the target already holds a different session with this id: entry at seq 1 \("[^"]+"\) differs$/,
    );
    expect(r.stdout).toContain("5 copied, 0 skipped (identical), 0 caught up, 1 conflicts");
    const after = await snapshotDir(target);
    // The target's own session is untouched, every other one copied.
    expect(after["beta/beta-one"]).toEqual(theirs["beta/beta-one"]);
    const { "beta/beta-one": _, ...rest } = before;
    const { "beta/beta-one": __, ...copied } = after;
    expect(copied).toEqual(rest);
  });

  it("reports a corrupt source session, copies the others and exits 1", async () => {
    const src = tempDir("corrupt");
    cpSync(source, src, { recursive: true });
    const file = join(src, "beta", "sessions", `${fixture.beta}.jsonl`);
    const lines = readFileSync(file, "utf8").split("\n");
    // Mid-file corruption: line 2 damaged, later lines intact.
    lines[1] = (lines[1] as string).replace('"hello"', '"jello"');
    writeFileSync(file, lines.join("\n"));
    const target = tempDir("corrupt-dst");
    const r = await sessiond(["copy", "--from", src, "--to", target]);
    expect(r.code).toBe(1);
    const corrupt = linesOf(r.stdout, "CORRUPT");
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]).toMatch(/^CORRUPT {4}beta\/beta-one {2}.*line 2/);
    expect(r.stdout).toContain(
      "5 copied, 0 skipped (identical), 0 caught up, 0 conflicts, 1 corrupt",
    );
    const after = await snapshotDir(target);
    expect(Object.keys(after)).not.toContain("beta/beta-one");
    const { "beta/beta-one": _, ...rest } = before;
    expect(after).toEqual(rest);
  });

  it("refuses bad arguments with a usage error", async () => {
    const missing = await sessiond(["copy", "--from", source]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^sessiond: copy: --from and --to are required/);
    const same = await sessiond(["copy", "--from", source, "--to", `jsonl:${source}`]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain("are the same storage");
    const scheme = await sessiond(["copy", "--from", source, "--to", "mysql://x/y"]);
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain('unknown storage "mysql://x/y"');
    const nowhere = await sessiond(["copy", "--from", join(source, "nope"), "--to", tempDir("x")]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/--from: data directory .*nope does not exist/);
    const help = await sessiond(["copy", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("postgres://user[:password]@host[:port]/db");
  });
  it("fails with one clear line when PostgreSQL cannot be reached", async () => {
    const r = await sessiond([
      "copy",
      "--from",
      source,
      "--to",
      "postgres://nobody@127.0.0.1:1/none",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^sessiond: --to postgres:\/\/nobody@127\.0\.0\.1:1\/none: /),
    ]);
  });
});

describe("storage specs", () => {
  it("parses directories, jsonl: and postgres:// and never prints a password", () => {
    expect(parseStorageSpec("from", "jsonl:/var/lib/x")).toEqual({
      kind: "jsonl",
      dir: "/var/lib/x",
    });
    expect(parseStorageSpec("from", "/var/lib/x")).toEqual({ kind: "jsonl", dir: "/var/lib/x" });
    const pgSpec = parseStorageSpec("to", "postgres://app:s3cret@db.example:6543/sessions");
    expect(pgSpec.kind).toBe("postgres");
    expect(describeSpec(pgSpec)).toBe("postgres://app@db.example:6543/sessions");
    expect(
      sameStorage(
        parseStorageSpec("a", "postgres://u@H:5432/db"),
        parseStorageSpec("b", "postgresql://v@h/db"),
      ),
    ).toBe(true);
    expect(() => parseStorageSpec("to", "memory")).toThrow(/not a storage to copy/);
  });
});

describe("copy verification (in-process)", () => {
  /** A target that silently drops the last entry of every session it creates. */
  class LossyEngine extends MemoryEngine {
    override create(key: SessionKey, entries: readonly Entry[]): Promise<void> {
      return super.create(key, entries.length > 1 ? entries.slice(0, -1) : entries);
    }
  }

  it("reports a session that reads back differently as a mismatch", async () => {
    const src = new JsonlEngine({ dataDir: source });
    const target = new LossyEngine();
    const seen: string[] = [];
    try {
      const summary = await copySessions({
        source: src,
        target,
        verifier: target,
        onSession: (o) => {
          if (o.status === "mismatch") seen.push(`${o.sessionId}: ${o.detail}`);
        },
      });
      expect(summary.mismatches).toBe(5); // every session but the root-only one
      expect(summary.verifiedSessions).toBe(1);
      const one = seen.find((s) => s.startsWith("beta-one"));
      expect(one).toMatch(/^beta-one: read back from the target: head seq 4, the source's is 5$/);
    } finally {
      await src.close();
      await target.close();
    }
  });

  it("never writes into a storage whose copy differs, even by one byte", async () => {
    const src = new MemoryEngine();
    const dst = new MemoryEngine();
    const a = storeOn(src);
    const b = storeOn(dst);
    await a.create({ sessionId: "same-id", title: "x" });
    await b.create({ sessionId: "same-id", title: "y" });
    const summary = await copySessions({ source: src, target: dst, verifier: dst });
    expect(summary).toMatchObject({ sessions: 1, conflicts: 1, written: 0, verifiedSessions: 0 });
    const root = (await dst.load({ workspace: "default", sessionId: "same-id" })).root;
    expect(root.kind.case === "sessionInfo" && root.kind.value.title).toBe("y");
    await a.close();
    await b.close();
  });
});

const skip = process.env.CI === "true" ? undefined : pgSkipReason();

if (skip !== undefined) {
  console.warn(`\n*** sessiond copy PostgreSQL tests SKIPPED: ${skip} ***\n`);
  it.skip(`sessiond copy JSONL -> PostgreSQL -> JSONL (skipped: ${skip})`, () => {});
} else {
  describe("sessiond copy through PostgreSQL", () => {
    let pg: PgServer | undefined;
    let db: { url: string; drop(): Promise<void> };

    beforeAll(async () => {
      pg = await startPostgres();
      if (pg === undefined) throw new Error("PostgreSQL is not available");
      db = await createDatabase(pg.url, "sessiond_copy");
    });

    afterAll(async () => {
      await db?.drop();
      await pg?.stop();
    });

    it("JSONL -> PostgreSQL -> fresh JSONL keeps every entry and every state", async () => {
      const toPg = await sessiond(["copy", "--from", source, "--to", db.url, "--verbose"]);
      expect(toPg.stderr).toBe("");
      expect(toPg.code, toPg.stdout).toBe(0);
      expect(linesOf(toPg.stdout, "COPIED")).toHaveLength(fixture.sessions);
      expect(toPg.stdout).toContain("6 copied, 0 skipped (identical)");
      expect(toPg.stdout).toContain("0 mismatches");
      // The printed target hides nothing but a password.
      expect(toPg.stdout).toContain(`written to ${db.url}`);

      const engine = await PostgresEngine.open({ url: db.url });
      try {
        expect(await snapshot(engine)).toEqual(before);
      } finally {
        await engine.close();
      }

      const back = join(tempDir("back"), "data");
      const fromPg = await sessiond(["copy", "--from", db.url, "--to", back]);
      expect(fromPg.code, fromPg.stdout).toBe(0);
      expect(fromPg.stdout).toContain("6 copied");
      expect(await snapshotDir(back)).toEqual(before);
      // Subagents land where the JSONL engine keeps them, and every file is byte-identical.
      for (const [id, dir] of [
        [fixture.main, "sessions"],
        [fixture.fork, "sessions"],
        [fixture.sub, "sessions/subagents"],
        [fixture.subsub, "sessions/subagents"],
      ] as const) {
        const rel = join("alpha", dir, `${id}.jsonl`);
        expect(records(join(back, rel))).toEqual(records(join(source, rel)));
      }

      // Again into PostgreSQL: everything already there.
      const again = await sessiond(["copy", "--from", back, "--to", db.url]);
      expect(again.code, again.stdout).toBe(0);
      expect(again.stdout).toContain("0 copied, 6 skipped (identical)");
    });

    it("catches up a grown session in PostgreSQL and reports a corrupt PostgreSQL row", async () => {
      const other = await createDatabase((pg as PgServer).url, "sessiond_copy_grow");
      try {
        const src = tempDir("pg-grow");
        cpSync(source, src, { recursive: true });
        expect((await sessiond(["copy", "--from", src, "--to", other.url])).code).toBe(0);
        const engine = new JsonlEngine({ dataDir: src });
        const store = storeOn(engine);
        await (await store.open("alpha", fixture.sub)).append(user("late", "one more"));
        await store.close();
        const r = await sessiond(["copy", "--from", src, "--to", other.url, "--verbose"]);
        expect(r.code, r.stdout).toBe(0);
        expect(linesOf(r.stdout, "CAUGHT UP")).toEqual([
          `CAUGHT UP  alpha/${fixture.sub}  (4 entries, 1 appended)`,
        ]);
        const pgEngine = await PostgresEngine.open({ url: other.url });
        try {
          expect(await snapshot(pgEngine)).toEqual(await snapshotDir(src));
        } finally {
          await pgEngine.close();
        }

        // A payload that no longer decodes: DATA_LOSS for that session only.
        const sql = postgres(other.url, { max: 1, onnotice: () => {} });
        try {
          await sql`UPDATE sessiond_entries SET payload = '{"id":' WHERE workspace = 'beta' AND session_id = 'beta-one' AND seq = 2`;
        } finally {
          await sql.end({ timeout: 1 });
        }
        const back = tempDir("pg-corrupt-back");
        const out = await sessiond(["copy", "--from", other.url, "--to", back]);
        expect(out.code).toBe(1);
        expect(linesOf(out.stdout, "CORRUPT")).toEqual([
          expect.stringMatching(/^CORRUPT {4}beta\/beta-one {2}.*corrupt at seq 2/),
        ]);
        expect(out.stdout).toContain("5 copied");
        expect(Object.keys(await snapshotDir(back))).toHaveLength(5);
      } finally {
        await other.drop();
      }
    });

    it("reports a conflict in PostgreSQL and exits 1", async () => {
      const other = await createDatabase((pg as PgServer).url, "sessiond_copy_conflict");
      try {
        const engine = await PostgresEngine.open({ url: other.url });
        const store = storeOn(engine);
        await store.create({ workspace: "beta", sessionId: "beta-one", title: "already here" });
        await store.close();
        const r = await sessiond(["copy", "--from", source, "--to", other.url]);
        expect(r.code).toBe(1);
        expect(linesOf(r.stdout, "CONFLICT")).toEqual([
          expect.stringMatching(
            /^CONFLICT {3}beta\/beta-one {2}the target already holds a different session/,
          ),
        ]);
        expect(r.stdout).toContain("5 copied");
      } finally {
        await other.drop();
      }
    });
  });
}

/** A JSONL file's records as "seq payload", without checksum and write marker. */
function records(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .map((l) => l.replace(/^\{"seq":(\d+),"crc":"[0-9a-f]{8}",(?:"more":true,)?"entry":/, "$1 "));
}
