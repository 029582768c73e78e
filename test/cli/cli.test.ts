import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { shortId } from "../../src/core/ids.js";
import { encodeRecord } from "../../src/storage/jsonl/record.js";
import { runCli as sessiond } from "../harness/cli.js";
import {
  BIN,
  REPO,
  removeDataDir,
  type SessiondProcess,
  startSessiond,
} from "../harness/server.js";

/**
 * The sessiond command as a user runs it: a real server process, and the
 * CLI as a child process whose stdout, stderr and exit code are checked.
 */

let server: SessiondProcess;
/** Temp dirs of the tests, removed at the end. */
const temps: string[] = [];
let client: SessiondClient;
let S: string[];

/** Runs a client command against the test server and expects exit 0. */
async function ok(...args: string[]): Promise<string> {
  const r = await sessiond([...args, ...S]);
  expect(r.stderr, `sessiond ${args.join(" ")}`).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

/** Creates a session with the given user/assistant turns; returns its id and the entry ids. */
async function session(title: string, turns: string[]): Promise<{ id: string; entries: string[] }> {
  const id = (await ok("new", "--title", title)).trim();
  const entries: string[] = [];
  for (const [i, text] of turns.entries()) {
    const role = i % 2 === 0 ? "user" : "assistant";
    const out = await ok("append", id, "--role", role, text);
    const m = /^appended (\S+) at seq (\d+)$/.exec(out.trim());
    expect(m, out).not.toBeNull();
    entries.push((m as RegExpExecArray)[1] as string);
  }
  return { id, entries };
}

beforeAll(async () => {
  server = await startSessiond();
  S = ["--server", server.url];
  client = createSessiondClient({ baseUrl: server.url });
});

afterAll(async () => {
  await server?.stop();
  if (server) removeDataDir(server.dataDir);
  for (const dir of temps) removeDataDir(dir);
});

describe("sessiond client commands", () => {
  it("append stores messages that ls --json and show report", async () => {
    const { id, entries } = await session("first chat", ["hello", "hi there", "write a poem"]);
    const listed = (await ok("ls", "--json"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const meta = listed.find((m) => m.id === id);
    expect(meta).toMatchObject({ title: "first chat", entryCount: "4", messageCount: "3" });
    for (const protocol of ["connect", "grpc-web"]) {
      const other = await ok("ls", "--json", "--protocol", protocol);
      expect(other).toContain(`"id":"${id}"`);
    }
    const table = await ok("ls");
    expect(table).toMatch(new RegExp(`^${shortId(id)}\\s+first chat\\s+4\\s+3\\s`, "m"));

    const tree = (await ok("show", id.slice(0, 17))).trimEnd().split("\n");
    expect(tree).toHaveLength(4);
    expect(tree[0]).toMatch(/^\* \S{8} session {2}first chat$/);
    expect(tree[1]).toBe(`* ${entries[0]?.slice(0, 8)} user  hello`);
    expect(tree[3]).toBe(`* ${entries[2]?.slice(0, 8)} user  write a poem  ← leaf`);
  });

  it("rewind then append grows a branch that show draws, the new path marked", async () => {
    const { id, entries } = await session("branchy", ["q1", "a1", "q2"]);
    const [q1, a1] = entries as [string, string];
    const out = await ok("rewind", id, q1.slice(0, 8));
    expect(out.trim()).toMatch(new RegExp(`^leaf is now ${q1} \\(head seq 5\\)$`));
    await ok("append", id, "--role", "assistant", "another answer");
    const tree = (await ok("show", id)).trimEnd().split("\n");
    expect(tree).toEqual([
      expect.stringMatching(/^\* \S{8} session {2}branchy$/),
      `* ${q1.slice(0, 8)} user  q1`,
      `├─   ${a1.slice(0, 8)} assistant  a1`,
      expect.stringMatching(/^│ {4}\S{8} user {2}q2$/),
      expect.stringMatching(/^└─ \* \S{8} assistant {2}another answer {2}← leaf$/),
    ]);
    const state = await ok("show", id, "--state");
    expect(state).toBe("user: q1\nassistant: another answer\n");
    const history = await ok("show", id, "--history", "--at", a1);
    expect(history).toBe("user: q1\nassistant: a1\n");
  });

  it("fork copies the path up to an entry into a new session", async () => {
    const { id, entries } = await session("to fork", ["q1", "a1", "q2"]);
    const forkId = (await ok("fork", id, entries[1] as string, "--title", "the fork")).trim();
    const tree = await ok("show", forkId);
    expect(tree).toContain("the fork");
    expect(tree).toContain("a1  ← leaf");
    expect(tree).not.toContain("q2");
    const json = JSON.parse(await ok("fork", id, "--json"));
    expect(json.forkedFrom).toEqual({ sessionId: id, entryId: entries[2] });
  });

  it("export then import round-trips a branched log exactly: ids, seqs, timestamps, root, leaf", async () => {
    const { id, entries } = await session("round trip", ["q1", "a1", "q2", "a2"]);
    const [q1, a1] = entries as [string, string];
    await ok("rewind", id, a1);
    await ok("append", id, "q2 again");
    await ok("append", id, "--role", "assistant", "a2 again");
    await ok("rewind", id, q1); // the log ends with a Leaf entry: import must keep it
    const exported = await ok("export", id);
    const lines = exported.trimEnd().split("\n");
    expect(lines).toHaveLength(9);
    expect(JSON.parse(lines[0] as string).sessionInfo.title).toBe("round trip");

    const copyId = `copy-${id}`;
    const dir = mkdtempSync(join(tmpdir(), "sessiond-cli-"));
    temps.push(dir);
    const file = join(dir, "export.jsonl");
    writeFileSync(file, exported);
    const imported = await ok("import", file, "--id", copyId);
    expect(imported.trim()).toBe(`imported ${copyId} (9 entries)`);

    const original = (await client.session.getEntries({ session: id })).entries;
    const copy = (await client.session.getEntries({ session: copyId })).entries;
    const asJson = (list: typeof original) =>
      list.map((e) => {
        const j = toJson(EntrySchema, e) as { sessionInfo?: { sessionId?: string } };
        if (j.sessionInfo) delete j.sessionInfo.sessionId;
        return j;
      });
    expect(asJson(copy)).toEqual(asJson(original));
    const meta = (await client.store.getSession({ session: copyId })).session;
    const source = (await client.store.getSession({ session: id })).session;
    expect(meta?.leafId).toBe(q1);
    expect(meta?.createdAt).toEqual(source?.createdAt);
    expect(meta?.headSeq).toBe(source?.headSeq);

    // The file records the original's id, whose log is the same: nothing to do, and it says so.
    expect((await ok("import", file)).trim()).toBe(
      `unchanged, already imported: ${id} (9 entries)`,
    );
    // The start of the log the server holds is already imported too.
    writeFileSync(file, lines.slice(0, 5).join("\n"));
    expect((await ok("import", file)).trim()).toMatch(/^unchanged/);
    // Another log under a taken id is refused.
    const other = JSON.parse(lines[0] as string);
    other.sessionInfo.title = "another title";
    writeFileSync(file, [JSON.stringify(other), ...lines.slice(1, 5)].join("\n"));
    const clash = await sessiond(["import", file, ...S]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(
      /^sessiond: session ".+" already exists .* another log .*\(already_exists\)\n$/,
    );
  });

  it("import refuses an invalid file and creates nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-cli-"));
    temps.push(dir);
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"id":"r","seq":"1","sessionInfo":{"title":"x"}}\nnot json\n');
    const r = await sessiond(["import", bad, "--id", "never-made", ...S]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sessiond: .*bad\.jsonl:2: not an Entry/);
    const orphan = join(dir, "orphan.jsonl");
    const entry = create(EntrySchema, {
      id: "q",
      parentId: "missing",
      kind: { case: "message", value: { role: Role.USER, content: [] } },
    });
    writeFileSync(
      orphan,
      `{"id":"r","seq":"1","sessionInfo":{"title":"x"}}\n${JSON.stringify(toJson(EntrySchema, entry))}\n`,
    );
    const r2 = await sessiond(["import", orphan, "--id", "never-made", ...S]);
    expect(r2.code).toBe(1);
    const missing = await sessiond(["show", "never-made", ...S]);
    expect(missing.code).toBe(1);
  });

  it("rm deletes a session", async () => {
    const { id } = await session("doomed", ["bye"]);
    expect((await ok("rm", id)).trim()).toBe(`deleted ${id}`);
    const r = await sessiond(["show", id, ...S]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not_found\)\n$/);
  });

  it("errors print one line and exit 1; usage errors exit 2; --help exits 0", async () => {
    const missing = await sessiond(["show", "abcdef-nothing", ...S]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe(
      'sessiond: session "abcdef-nothing" not found in workspace "default" (not_found)\n',
    );
    const badFlag = await sessiond(["ls", "--no-such-flag", ...S]);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr.trim().split("\n")).toHaveLength(1);
    expect(badFlag.stderr).toMatch(/^sessiond: ls: /);
    expect((await sessiond(["append", ...S])).code).toBe(2);
    expect((await sessiond(["append", "x", "--role", "robot", "hi", ...S])).code).toBe(2);
    expect((await sessiond(["ls", "--server", "not a url"])).code).toBe(2);
    expect((await sessiond(["frobnicate"])).code).toBe(2);
    const down = await sessiond(["ls", "--server", "http://127.0.0.1:1"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^sessiond: .*\(unavailable\)\n$/);

    const top = await sessiond(["--help"]);
    expect(top.code).toBe(0);
    const names = [
      "ls",
      "tag",
      "show",
      "tail",
      "append",
      "rewind",
      "fork",
      "rm",
      "export",
      "import",
      "fsck",
    ];
    for (const name of names) expect(top.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
    const helps = await Promise.all(names.map((name) => sessiond([name, "--help"])));
    helps.forEach((h, i) => {
      expect(h.code).toBe(0);
      expect(h.stdout).toMatch(new RegExp(`^Usage: sessiond ${names[i]}`));
    });
  });

  it("tail prints the log, and tail -f receives an entry appended after it started", async () => {
    const { id } = await session("followed", ["one", "two"]);
    const log = await ok("tail", id);
    expect(log).toMatch(/^ {4}1 {2}\S+ {2}session {4}followed\n {4}2 {2}\S+ {2}user {7}one\n/);
    const jsonLines = (await ok("tail", id, "--json", "--after", "2")).trim().split("\n");
    expect(jsonLines.map((l) => JSON.parse(l).seq)).toEqual(["3"]);

    const proc = spawn(process.execPath, [BIN, "tail", "-f", id, "-n", "1", ...S], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const seen = (text: string, ms: number) =>
      new Promise<void>((done, fail) => {
        const timer = setTimeout(
          () => fail(new Error(`tail -f never printed ${text}:\n${out}`)),
          ms,
        );
        const check = () => {
          if (!out.includes(text)) return;
          clearTimeout(timer);
          proc.stdout.off("data", check);
          done();
        };
        proc.stdout.on("data", check);
        check();
      });
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((done) => proc.once("exit", done));
    try {
      await seen("two", 15_000);
      expect(out).not.toContain("one");
      await ok("append", id, "three, live");
      await seen("three, live", 15_000);
      expect(out.trim().split("\n")).toHaveLength(2);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});

describe("sessiond fsck", () => {
  /** A valid session file: a root and `n` user messages, each line a checksummed record. */
  function sessionFile(id: string, n: number): string {
    let text = "";
    const root = create(EntrySchema, {
      id: `${id}-root`,
      seq: 1n,
      kind: { case: "sessionInfo", value: { sessionId: id, title: id } },
    });
    text += encodeRecord(root);
    for (let i = 1; i <= n; i++) {
      const e = create(EntrySchema, {
        id: `${id}-${i}`,
        parentId: i === 1 ? `${id}-root` : `${id}-${i - 1}`,
        seq: BigInt(i + 1),
        kind: {
          case: "message",
          value: { role: Role.USER, content: [{ part: { case: "text", value: `message ${i}` } }] },
        },
      });
      text += encodeRecord(e);
    }
    return text;
  }

  /** What a crash in the middle of an append leaves: a cut-off record. */
  const TORN_BYTES = '{"seq":5,"crc":"0badf00d","entry":{"id":"x';

  function dataDir(): { dir: string; files: Record<string, string> } {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-fsck-"));
    const top = join(dir, "default", "sessions");
    const sub = join(dir, "team-b", "sessions", "subagents");
    mkdirSync(top, { recursive: true });
    mkdirSync(sub, { recursive: true });
    const good = sessionFile("good", 3);
    const torn = sessionFile("torn", 3) + TORN_BYTES;
    const corrupt = sessionFile("corrupt", 3).replace("message 1", "massage 1");
    const files = {
      [join(top, "good.jsonl")]: good,
      [join(top, "torn.jsonl")]: torn,
      [join(sub, "corrupt.jsonl")]: corrupt,
      [join(top, "notes.txt")]: "not a session",
    };
    for (const [path, text] of Object.entries(files)) writeFileSync(path, text);
    return { dir, files };
  }

  function unchanged(files: Record<string, string>): void {
    for (const [path, text] of Object.entries(files)) {
      expect(readFileSync(path).equals(Buffer.from(text)), path).toBe(true);
    }
  }

  it("reports ok, torn tail and mid-file corruption per file, exits 1, modifies nothing", async () => {
    const { dir, files } = dataDir();
    try {
      const r = await sessiond(["fsck", "--data-dir", dir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe("");
      const lines = r.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(4);
      expect(lines).toContain("OK          default/sessions/good.jsonl  (4 entries)");
      expect(lines).toContain(
        `TORN TAIL   default/sessions/torn.jsonl  (4 entries; ${TORN_BYTES.length} bytes after the last good record, line 5: incomplete last line (no newline))`,
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^CORRUPT {5}team-b\/sessions\/subagents\/corrupt\.jsonl {2}line 2: .*followed by an intact record/,
        ),
      );
      expect(lines[3]).toBe("3 session files: 1 ok, 1 torn tail, 1 corrupt");
      unchanged(files);

      const json = await sessiond(["fsck", "--data-dir", dir, "--json"]);
      expect(json.code).toBe(1);
      const reports = json.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(reports.map((x) => [x.sessionId, x.status, x.line])).toEqual([
        ["good", "ok", undefined],
        ["torn", "torn_tail", 5],
        ["corrupt", "corrupt", 2],
      ]);
      expect(reports[2]).toMatchObject({ workspace: "team-b", subagent: true });
      unchanged(files);
    } finally {
      removeDataDir(dir);
    }
  });

  it("exits 0 when the only damage is a torn tail", async () => {
    const { dir, files } = dataDir();
    const clean = mkdtempSync(join(tmpdir(), "sessiond-fsck-"));
    try {
      cpSync(join(dir, "default"), join(clean, "default"), { recursive: true });
      const r = await sessiond(["fsck", "--data-dir", clean]);
      expect(r.code).toBe(0);
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe(
        "2 session files: 1 ok, 1 torn tail, 0 corrupt",
      );
      const torn = Object.entries(files).find(([path]) => path.endsWith("torn.jsonl"));
      const copy = readFileSync(join(clean, "default", "sessions", "torn.jsonl"));
      expect(copy.equals(Buffer.from(torn?.[1] ?? ""))).toBe(true);
    } finally {
      removeDataDir(dir);
      removeDataDir(clean);
    }
  });

  it("reports a missing data directory in one line", async () => {
    const r = await sessiond(["fsck", "--data-dir", join(tmpdir(), "no-such-sessiond-dir")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sessiond: data directory .* does not exist\n$/);
  });
});
