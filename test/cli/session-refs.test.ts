import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/** How people name sessions on the command line: the short ids `ls` prints, deleted parents. */

let server: SessiondProcess;
let client: SessiondClient;

beforeAll(async () => {
  server = await startSessiond();
  client = createSessiondClient({ baseUrl: server.url });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

async function sessiond(...args: string[]) {
  return runCli([...args, "--server", server.url]);
}

async function createSession(title: string, parentSessionId?: string): Promise<string> {
  const { session } = await client.store.createSession({ title, parentSessionId });
  return session?.id as string;
}

describe("session references on the command line", () => {
  it("show takes the short id that ls prints for a session made the same day as others", async () => {
    const id = await createSession("short and sweet");
    await createSession("same day");
    const ls = await sessiond("ls");
    expect(ls.code, ls.stderr).toBe(0);
    const row = ls.stdout.split("\n").find((line) => line.includes("short and sweet"));
    const short = row?.split(/\s+/)[0] as string;
    expect(short).toMatch(/^[0-9a-f]{8}$/);
    expect(id.endsWith(`-${short}`)).toBe(true);
    const show = await sessiond("show", short);
    expect(show.stderr).toBe("");
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^\* \S{8} session {2}short and sweet {2}← leaf$/m);
  });

  it("ls --parent lists the subagents of a deleted parent given by its full id", async () => {
    const parent = await createSession("doomed parent");
    const children = [
      await createSession("child one", parent),
      await createSession("child two", parent),
    ];
    const rm = await sessiond("rm", parent);
    expect(rm.stdout.trim()).toBe(`deleted ${parent}`);
    const ls = await sessiond("ls", "--parent", parent, "--json");
    expect(ls.stderr).toBe("");
    expect(ls.code).toBe(0);
    const listed = ls.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).id);
    expect(listed.sort()).toEqual(children.sort());
  });

  it("ls --parent with a prefix of a deleted parent fails with NOT_FOUND saying to give the full id", async () => {
    const parent = await createSession("another doomed parent");
    await createSession("orphan", parent);
    expect((await sessiond("rm", parent)).code).toBe(0);
    const ls = await sessiond("ls", "--parent", parent.slice(-8));
    expect(ls.code).toBe(1);
    expect(ls.stdout).toBe("");
    expect(ls.stderr.trim().split("\n")).toHaveLength(1);
    expect(ls.stderr).toContain("the subagents of a deleted session are listed by its full id");
    expect(ls.stderr).toContain("(not_found)");
  });
});
