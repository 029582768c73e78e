import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { REPO, removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/** What comes before the command name: --version, and client flags given first. */

let server: SessiondProcess;
let teamSession: string;

beforeAll(async () => {
  server = await startSessiond();
  const client = createSessiondClient({ baseUrl: server.url });
  const created = await client.store.createSession({ workspace: "team", title: "in team" });
  teamSession = created.session?.id as string;
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe("sessiond global flags", () => {
  it("sessiond --version and -V print package.json's version", async () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = await runCli([flag]);
      expect(r).toEqual({ code: 0, stdout: `sessiond ${pkg.version}\n`, stderr: "" });
    }
  });

  it("client flags before the command name apply to it: sessiond --server URL -w team --json ls", async () => {
    const r = await runCli(["--server", server.url, "-w", "team", "--json", "ls"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const listed = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed.map((m) => m.id)).toEqual([teamSession]);
  });

  it("an unknown flag before the command is a usage error naming the flag", async () => {
    const r = await runCli(["--frobnicate", "ls"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'sessiond: unknown flag "--frobnicate" before the command (see sessiond --help)\n',
    );
  });
});
