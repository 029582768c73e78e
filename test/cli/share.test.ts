import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond share` through the real command against a server process: the
 * link it prints reads (ReadShare over the wire, no token), --list shows
 * the share by its id with its state and omissions, --revoke by id makes
 * it NOT_FOUND; usage errors exit 2 and the server's refusals name what
 * is wrong.
 */

let server: SessiondProcess | undefined;
const url = () => (server as SessiondProcess).url;
const cli = (...args: string[]) => runCli([...args, "--server", url(), "--workspace", "cli-share"]);

beforeAll(async () => {
  server = await startSessiond({ args: ["--storage", "jsonl"] });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (server !== undefined) await removeDataDir(server.dataDir);
});

describe("sessiond share", () => {
  it("prints a link that reads, lists it by id, revokes it by id", async () => {
    expect((await cli("new", "--id", "sess1", "--title", "cli share")).code).toBe(0);
    expect((await cli("append", "sess1", "--id", "q1", "hello")).code).toBe(0);
    const made = await cli(
      "share",
      "sess1",
      "--entry",
      "q1",
      "--expires",
      "12h",
      "--omit-thinking",
      "--by",
      "ana",
    );
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    const link = made.stdout.trim();
    expect(link).toMatch(new RegExp(`^${url()}/share/[A-Za-z0-9_-]{43}$`));
    const token = link.split("/share/")[1] as string;
    const id = token.slice(0, 12);

    const read = await fetch(`${url()}/sessiond.v1.StoreService/ReadShare`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    expect(read.status).toBe(200);
    const snap = (await read.json()) as { title: string; entries: { id: string }[] };
    expect(snap.title).toBe("cli share");
    expect(snap.entries.map((e) => e.id).slice(1)).toEqual(["q1"]);

    const listed = await cli("share", "--list");
    expect(listed.code).toBe(0);
    const row = listed.stdout.split("\n").find((l) => l.startsWith(id)) ?? "";
    expect(row).toMatch(/sess1\s+q1\s.*\slive\s+thinking\s+ana$/);
    expect(listed.stdout).not.toContain(token);

    const revoked = await cli("share", "--revoke", id);
    expect(revoked.stdout.trim()).toBe(`revoked ${id} (session sess1)`);
    expect((await cli("share", "--list", "sess1")).stdout).toMatch(/\srevoked\s/);
    const gone = await fetch(`${url()}/sessiond.v1.StoreService/ReadShare`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    expect(gone.status).toBe(404);
  });

  it("usage errors exit 2; the server's refusals name the entry and the limit", async () => {
    expect((await cli("new", "--id", "sess2")).code).toBe(0);
    const noSession = await cli("share");
    expect(noSession.code).toBe(2);
    expect(noSession.stderr).toContain("give a SESSION");
    const badExpiry = await cli("share", "sess2", "--expires", "soon");
    expect(badExpiry.code).toBe(2);
    expect(badExpiry.stderr).toContain("--expires must be a duration like 30m, 12h or 7d");
    expect((await cli("share", "--list", "--revoke", "x")).code).toBe(2);
    const unknown = await cli("share", "sess2", "--entry", "nope");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('entry "nope" not found');
    const tooLong = await cli("share", "sess2", "--expires", "400d");
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toContain("more than 365 days");
  });
});
