import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `ls` against more sessions than one page holds: it must say that more
 * exist, and --limit must not be bounded by the server's page size.
 */

const servers: SessiondProcess[] = [];

/** A server on memory storage (fast to fill) holding `n` sessions. */
async function serverWith(n: number, args: string[] = []): Promise<SessiondProcess> {
  const server = await startSessiond({ args: ["--storage", "memory", ...args] });
  servers.push(server);
  const client = createSessiondClient({ baseUrl: server.url });
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) =>
      client.store.createSession({ title: `s${i + j}` }),
    );
    await Promise.all(batch);
  }
  return server;
}

/** The ids `ls --json` printed. */
function ids(stdout: string): string[] {
  return stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l).id);
}

let big: SessiondProcess;
let small: SessiondProcess;

beforeAll(async () => {
  [big, small] = await Promise.all([
    serverWith(1001),
    serverWith(12, ["--default-page-size", "3", "--max-page-size", "5"]),
  ]);
});

afterAll(async () => {
  for (const s of servers) {
    await s.stop();
    await removeDataDir(s.dataDir);
  }
});

describe("sessiond ls paging", () => {
  it("ls --limit above the server's largest page reads several pages instead of failing", async () => {
    const r = await runCli(["ls", "--limit", "5000", "--json", "--server", big.url]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const listed = ids(r.stdout);
    expect(listed).toHaveLength(1001);
    expect(new Set(listed).size).toBe(1001);
  });

  it("ls without --all says on stderr, also when piped, that more sessions exist than it shows", async () => {
    const r = await runCli(["ls", "--server", small.url]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1 + 3);
    expect(r.stderr).toBe("sessiond: 3 sessions shown, more exist (--limit N or --all for more)\n");
  });

  it("ls --limit cut short of the end says more exist; --all reads to the end silently", async () => {
    const cut = await runCli(["ls", "--limit", "8", "--json", "--server", small.url]);
    expect(cut.code).toBe(0);
    expect(ids(cut.stdout)).toHaveLength(8);
    expect(cut.stderr).toMatch(/more exist/);
    const all = await runCli(["ls", "--all", "--json", "--server", small.url]);
    expect(all.stderr).toBe("");
    expect(new Set(ids(all.stdout)).size).toBe(12);
  });

  it("ls --limit 0 is a usage error that says what --limit takes", async () => {
    const r = await runCli(["ls", "--limit", "0", "--server", small.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("sessiond: --limit must be at least 1 (--all lists every session)\n");
  });
});
