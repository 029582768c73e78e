import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond tag`: a session's tags changed by one appended SessionInfo
 * entry (set and removed together), what ls then finds, and the usage
 * errors.
 */

let server: SessiondProcess;

async function cli(...args: string[]) {
  return runCli([...args, "--server", server.url]);
}

beforeAll(async () => {
  server = await startSessiond();
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe("sessiond tag", () => {
  it("sets and removes tags in one entry, prints them, and ls finds the session by them", async () => {
    const made = await cli("new", "--tag", "user=ana", "--tag", "repo=x", "--json");
    const id = JSON.parse(made.stdout).id as string;
    const r = await cli("tag", id, "user=bob", "team=core", "--remove", "repo");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("team=core\nuser=bob\n");
    const found = await cli("ls", "--tag", "team=core", "--json");
    expect(JSON.parse(found.stdout.trim()).id).toBe(id);
    expect((await cli("ls", "--tag", "repo=x")).stdout).toContain("match");
    const client = createSessiondClient({ baseUrl: server.url });
    const { entries } = await client.session.getEntries({ session: id });
    const infos = entries.filter((e) => e.kind.case === "sessionInfo");
    expect(infos).toHaveLength(2);
    expect(infos[1]?.kind.value).toMatchObject({ tags: { user: "bob", team: "core", repo: "" } });
  });

  it("with nothing to change it only prints the tags, appending nothing", async () => {
    const id = JSON.parse((await cli("new", "--tag", "user=ana", "--json")).stdout).id as string;
    const r = await cli("tag", id);
    expect(r.stdout).toBe("user=ana\n");
    const client = createSessiondClient({ baseUrl: server.url });
    expect((await client.store.getSession({ session: id })).session?.headSeq).toBe(1n);
  });

  it("malformed arguments are usage errors; an unknown session is NOT_FOUND naming it", async () => {
    const id = JSON.parse((await cli("new", "--json")).stdout).id as string;
    const none = await cli("tag");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("tag: missing ID");
    const bad = await cli("tag", id, "novalue");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('a tag wants KEY=VALUE, got "novalue"');
    const both = await cli("tag", id, "user=x", "--remove", "user");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('tag "user" is both set and removed');
    const key = await cli("tag", id, "bad key=v");
    expect(key.code).not.toBe(0);
    expect(key.stderr).toContain('invalid tag key "bad key"');
    const missing = await cli("tag", "20260101-000000-deadbeef", "user=x");
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("20260101-000000-deadbeef");
    expect(missing.stderr.toLowerCase()).toContain("not found");
  });
});
