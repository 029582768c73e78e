import { afterEach, describe, expect, it } from "vitest";
import { SessionEventType } from "../../gen/sessiond/v1/store_service_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { eventually } from "./support/stream.js";

/**
 * Retention from outside: `sessiond gc` over the API (dry run, then for
 * real, subagents with their parent) and the server's background sweep
 * (serve --retention-*), which logs its policy and each removal and whose
 * removals reach WatchSessions as DELETED events. Runs on the engine the
 * integration suite runs on (JSONL, or PostgreSQL with SESSIOND_TEST_STORAGE).
 */

let server: SessiondProcess | undefined;
afterEach(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  server = undefined;
});

const text = (value: string) => ({
  kind: {
    case: "message" as const,
    value: { role: 1, content: [{ part: { case: "text" as const, value } }] },
  },
});

describe("retention", () => {
  it("sessiond gc --keep: a dry run names what goes, the real run removes it with its subagents", async () => {
    server = await startSessiond();
    const client = createSessiondClient({ baseUrl: server.url });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await client.store.createSession({ title: `s${i}` })).session?.id as string);
      await new Promise((r) => setTimeout(r, 5));
    }
    const [oldest, second] = ids as [string, string];
    await client.store.createSession({ parentSessionId: oldest, agentType: "explore" });
    // The oldest but one gets the newest entry: it is kept.
    await client.session.append({ session: second, entries: [text("still in use")] });
    const dry = await runCli(["gc", "--keep", "2", "--dry-run", "--server", server.url]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would remove ${oldest} (keep-newest)`);
    expect(dry.stdout).toContain(`would remove ${ids[2]} (keep-newest)`);
    expect((await client.store.listSessions({})).sessions).toHaveLength(4);
    const real = await runCli(["gc", "--keep", "2", "--json", "--server", server.url]);
    expect(real.code).toBe(0);
    const lines = real.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const removed = lines.flatMap((l) => l.removed as string[]);
    expect(removed).toContain(oldest);
    expect(removed).toContain(ids[2]);
    expect(removed).toHaveLength(3); // and the subagent of the oldest
    const left = (await client.store.listSessions({})).sessions.map((s) => s.id).sort();
    expect(left).toEqual([second, ids[3]].sort());
    const usage = await runCli(["gc", "--server", server.url]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("gc needs --max-age AGE or --keep N");
  });

  it("the server sweeps by its policy, logs it, and watchers see the removals", async () => {
    server = await startSessiond({
      args: ["--retention", "default:keep=1", "--retention-interval", "1s"],
    });
    const client = createSessiondClient({ baseUrl: server.url });
    const ac = new AbortController();
    const deleted: string[] = [];
    const watching = (async () => {
      try {
        for await (const ev of client.store.watchSessions({}, { signal: ac.signal })) {
          if (ev.type === SessionEventType.DELETED) deleted.push(ev.sessionId);
        }
      } catch {
        // aborted at the end
      }
    })();
    const first = (await client.store.createSession({ title: "first" })).session?.id as string;
    await new Promise((r) => setTimeout(r, 5));
    const second = (await client.store.createSession({ title: "second" })).session?.id as string;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && !deleted.includes(first)) {
      await new Promise((r) => setTimeout(r, 100));
    }
    ac.abort();
    await watching;
    expect(deleted).toEqual([first]);
    expect((await client.store.listSessions({})).sessions.map((s) => s.id)).toEqual([second]);
    expect(server.stderr()).toContain('"msg":"retention policy"');
    // The sweep logs after its deletions, which watchers may see first: the
    // line can reach stderr a moment after the DELETED event (CI on PostgreSQL
    // read stderr too early once).
    const line = new RegExp(
      `"msg":"retention","workspace":"default","removed":\\[\\{"session":"${first}","reason":"keep-newest"`,
    );
    const sweeping = server;
    await eventually(() => line.test(sweeping.stderr()), 5_000, "the retention log line");
  });

  it("refuses malformed retention flags at start", async () => {
    const bad = await runCli([
      "serve",
      "--retention",
      "default:keep=zero",
      "--listen",
      "127.0.0.1:0",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--retention");
  });
});
