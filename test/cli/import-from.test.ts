import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { runCli as sessiond } from "../harness/cli.js";
import { REPO, removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond import --from` as a user runs it: pi files and a Claude Code
 * project directory imported into a real server, notes on stderr, the
 * counts on stdout, and a second run that changes nothing.
 */

const FIXTURES = join(REPO, "test/fixtures/importers");
const A = "5a1c9e3e-0000-4000-8000-00000000000a";
const B = "5a1c9e3e-0000-4000-8000-00000000000b";

let server: SessiondProcess;
let client: SessiondClient;
let S: string[];

beforeAll(async () => {
  server = await startSessiond();
  S = ["--server", server.url];
  client = createSessiondClient({ baseUrl: server.url });
});

afterAll(async () => {
  await server?.stop();
  await removeDataDir(server.dataDir);
});

describe("sessiond import --from", () => {
  it("pi: a directory of session files, every damaged line reported by file and line, then unchanged on a rerun", async () => {
    const dir = join(FIXTURES, "pi");
    const first = await sessiond(["import", "--from", "pi", dir, ...S]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      `imported 0193a5c2-7d1e-7000-8000-000000000001 (31 entries) from ${join(dir, "v3-branches.jsonl")}`,
    );
    expect(first.stdout.trim().split("\n").at(-1)).toMatch(
      /^4 imported, 0 extended, 0 unchanged, 0 failed, \d+ notes \(4 files\)$/,
    );
    expect(first.stderr).toContain(`sessiond: ${join(dir, "v3-branches.jsonl")}:24: not JSON`);
    expect(first.stderr).toContain(`${join(dir, "damaged.jsonl")}:3: entry d2: `);
    const state = await client.session.getState({
      session: "0193a5c2-7d1e-7000-8000-000000000001",
    });
    expect(state.state?.leafId).toBe("a6");
    expect(state.state?.title).toBe(undefined);

    const again = await sessiond(["import", "--from", "pi", dir, ...S]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split("\n").at(-1)).toMatch(
      /^0 imported, 0 extended, 4 unchanged, 0 failed/,
    );
  });

  it("claude-code: a project directory, subagent transcripts as subagent sessions of theirs", async () => {
    const r = await sessiond([
      "import",
      "--from",
      "claude-code",
      join(FIXTURES, "claude-code/-home-ana-shop"),
      ...S,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(
      /^5 imported, 0 extended, 0 unchanged, 0 failed, 2 notes \(4 files\)$/,
    );
    const subagents = async (parent: string) =>
      (await client.store.listSessions({ parentSessionId: parent })).sessions
        .map((s) => s.id)
        .sort();
    expect(await subagents(A)).toEqual([`agent-ffeeddc-${A}`, `sc-00000000-${A}`]);
    expect(await subagents(B)).toEqual([`agent-a1b2c3d-${B}`]);
    const sub = (await client.store.getSession({ session: `agent-a1b2c3d-${B}` })).session;
    expect(sub?.agentType).toBe("Explore");
    const a = (await client.store.getSession({ session: A })).session;
    expect(a?.title).toBe("Cart and checkout");
  });

  it("a file that is not a pi session is reported as failed, the others still imported, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-import-from-"));
    cpSync(join(FIXTURES, "pi/v2-hook-message.jsonl"), join(dir, "good.jsonl"));
    writeFileSync(join(dir, "bad.jsonl"), '{"type":"message","id":"x"}\n');
    const r = await sessiond(["import", "--from", "pi", dir, ...S]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${join(dir, "bad.jsonl")}: not a pi session file`);
    expect(r.stdout.trim().split("\n").at(-1)).toMatch(
      /^0 imported, 0 extended, 1 unchanged, 1 failed/,
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it("a pi file larger than a message goes in parts; grown since, only its new entries are added", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-import-big-"));
    const file = join(dir, "big.jsonl");
    const header = {
      type: "session",
      version: 3,
      id: "big-pi-session",
      timestamp: "2026-01-01T00:00:00Z",
    };
    const line = (i: number) =>
      JSON.stringify({
        type: "message",
        id: `e${i}`,
        parentId: i === 0 ? null : `e${i - 1}`,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
        message: {
          role: i % 2 === 0 ? "user" : "assistant",
          content: [{ type: "text", text: `${i} ${"x".repeat(1000)}` }],
        },
      });
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, k) => line(from + k));
    writeFileSync(file, [JSON.stringify(header), ...lines(0, 3000)].join("\n"));
    const first = await sessiond(["import", "--from", "pi", file, ...S]);
    expect(first.stdout).toContain("imported big-pi-session (3001 entries)");
    expect((await client.store.getSession({ session: "big-pi-session" })).session?.headSeq).toBe(
      3001n,
    );

    writeFileSync(file, [JSON.stringify(header), ...lines(0, 3010)].join("\n"));
    const grown = await sessiond(["import", "--from", "pi", file, ...S]);
    expect(grown.stdout).toContain(
      "extended, its start already imported: big-pi-session (3011 entries)",
    );
    const meta = (await client.store.getSession({ session: "big-pi-session" })).session;
    expect([meta?.headSeq, meta?.leafId]).toEqual([3011n, "e3009"]);
    const again = await sessiond(["import", "--from", "pi", file, ...S]);
    expect(again.stdout).toContain("unchanged, already imported: big-pi-session");

    writeFileSync(
      file,
      [JSON.stringify(header), line(0).replace('"0 x', '"zero x'), ...lines(1, 3010)].join("\n"),
    );
    const other = await sessiond(["import", "--from", "pi", file, ...S]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/session big-pi-session: .*another log.*\(already_exists\)/);
    rmSync(dir, { recursive: true, force: true });
  });

  it("re-importing the original pi file after its longer version answers unchanged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-import-older-"));
    const file = join(dir, "s.jsonl");
    const header = {
      type: "session",
      version: 3,
      id: "older-pi",
      timestamp: "2026-01-01T00:00:00Z",
    };
    const line = (i: number) =>
      JSON.stringify({
        type: "message",
        id: `e${i}`,
        parentId: i === 0 ? null : `e${i - 1}`,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        message: {
          role: i % 2 === 0 ? "user" : "assistant",
          content: [{ type: "text", text: `${i}` }],
        },
      });
    const file3 = [JSON.stringify(header), line(0), line(1), line(2)].join("\n");
    writeFileSync(file, `${file3}\n${line(3)}\n${line(4)}`);
    expect((await sessiond(["import", "--from", "pi", file, ...S])).code).toBe(0);
    writeFileSync(file, file3);
    const older = await sessiond(["import", "--from", "pi", file, ...S]);
    expect(older.stderr).toBe("");
    expect([older.code, older.stdout]).toEqual([
      0,
      expect.stringContaining("unchanged, already imported: older-pi"),
    ]);
    const meta = (await client.store.getSession({ session: "older-pi" })).session;
    expect([meta?.headSeq, meta?.leafId]).toEqual([6n, "e4"]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("an unknown source is a usage error", async () => {
    const r = await sessiond(["import", "--from", "codex", ".", ...S]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--from must be one of pi, claude-code/);
  });
});
