import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond new --tag` and `sessiond ls` with filter flags and --sort,
 * against a server on JSONL storage: what is printed is what the filter
 * selects, and malformed flags are usage errors (exit 2) naming the flag.
 */

let server: SessiondProcess;
const id: Record<string, string> = {};

async function cli(...args: string[]) {
  return runCli([...args, "--server", server.url]);
}

function ids(stdout: string): string[] {
  return stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l).id);
}

beforeAll(async () => {
  server = await startSessiond();
  for (const [name, title, tags] of [
    ["a", "Fix the parser", ["user=ana", "repo=x"]],
    ["b", "Release notes", ["user=bob", "repo=x"]],
    ["c", "parser: second try", ["user=ana"]],
  ] as const) {
    const r = await cli("new", "--title", title, ...tags.flatMap((t) => ["--tag", t]), "--json");
    expect(r.code).toBe(0);
    id[name] = JSON.parse(r.stdout).id;
  }
  // b gets the newest entry.
  const client = createSessiondClient({ baseUrl: server.url });
  await client.session.append({
    session: id.b as string,
    entries: [
      {
        kind: {
          case: "message",
          value: { role: 1, content: [{ part: { case: "text", value: "hi" } }] },
        },
      },
    ],
  });
});

afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe("sessiond ls filters", () => {
  it("new --tag sets the tags; ls --json shows them", async () => {
    const r = await cli("ls", "--json", "--tag", "user=ana", "--tag", "repo=x");
    expect(r.code).toBe(0);
    expect(ids(r.stdout)).toEqual([id.a]);
    expect(JSON.parse(r.stdout).tags).toEqual({ user: "ana", repo: "x" });
  });

  it("--title matches case-insensitively; filters combine", async () => {
    expect(ids((await cli("ls", "--json", "--title", "PARSER")).stdout)).toEqual([id.c, id.a]);
    expect(ids((await cli("ls", "--json", "--title", "parser", "--tag", "repo=x")).stdout)).toEqual(
      [id.a],
    );
  });

  it("--sort updated puts the session with the newest entry first; --oldest-first reverses", async () => {
    expect(ids((await cli("ls", "--json", "--sort", "updated")).stdout)[0]).toBe(id.b);
    expect(
      ids((await cli("ls", "--json", "--sort", "updated", "--oldest-first")).stdout).at(-1),
    ).toBe(id.b);
  });

  it("time flags take ages and RFC 3339 times", async () => {
    expect(ids((await cli("ls", "--json", "--created-after", "1h")).stdout)).toHaveLength(3);
    expect(ids((await cli("ls", "--json", "--created-before", "2000-01-01")).stdout)).toEqual([]);
    expect(
      ids((await cli("ls", "--json", "--updated-after", "2000-01-01T00:00:00Z")).stdout),
    ).toHaveLength(3);
    const none = await cli("ls", "--title", "no such title");
    expect(none.stdout).toContain('no sessions in workspace "default" match');
  });

  it("malformed flags are usage errors naming the flag; the server's refusals name the field", async () => {
    const tag = await cli("ls", "--tag", "novalue");
    expect(tag.code).toBe(2);
    expect(tag.stderr).toContain("--tag wants KEY=VALUE");
    const time = await cli("ls", "--updated-after", "yesterday");
    expect(time.code).toBe(2);
    expect(time.stderr).toContain("--updated-after wants an RFC 3339 time");
    const sort = await cli("ls", "--sort", "title");
    expect(sort.code).toBe(2);
    expect(sort.stderr).toContain("--sort wants created or updated");
    const key = await cli("ls", "--tag", "bad key=v");
    expect(key.code).not.toBe(0);
    expect(key.stderr).toContain('invalid tag key "bad key"');
  });
});
