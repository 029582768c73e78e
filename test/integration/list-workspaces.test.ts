/**
 * ListWorkspaces against a real server process with token grants: the
 * workspaces that hold sessions, by name, paged, with their counts of
 * top-level and subagent sessions; a token scoped to some workspaces sees
 * those only; bad pages are INVALID_ARGUMENT naming what is wrong.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSessiondClient,
  type Protocol,
  type WorkspaceSummary,
} from "../../src/client/index.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";
import { expectCode } from "./support/errors.js";

const TOKEN_SOME = "token-for-alpha-and-empty-0123456789";
const TOKEN_ALL = "token-for-every-workspace-0123456789";

describe("ListWorkspaces", () => {
  let server: SessiondProcess;
  let tokensDir: string;
  const client = (token?: string, protocol: Protocol = "grpc") =>
    createSessiondClient({
      baseUrl: server.url,
      protocol,
      retry: false,
      timeoutMs: 10_000,
      ...(token === undefined ? {} : { token }),
    });

  /** Every page of ListWorkspaces, `pageSize` at a time. */
  async function everyPage(
    token: string,
    pageSize: number,
    protocol: Protocol = "grpc",
  ): Promise<{ workspaces: WorkspaceSummary[]; pages: number }> {
    const workspaces: WorkspaceSummary[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const res = await client(token, protocol).store.listWorkspaces({ pageSize, pageToken });
      workspaces.push(...res.workspaces);
      pageToken = res.nextPageToken;
      pages++;
    } while (pageToken !== "");
    return { workspaces, pages };
  }

  const row = (name: string, sessions: number, subagents: number) => ({
    name,
    sessionCount: BigInt(sessions),
    subagentSessionCount: BigInt(subagents),
  });

  beforeAll(async () => {
    tokensDir = mkdtempSync(join(tmpdir(), "sessiond-workspaces-"));
    const file = join(tokensDir, "tokens.json");
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: TOKEN_SOME, workspaces: ["alpha", "empty"] },
          { token: TOKEN_ALL, workspaces: ["*"] },
        ],
      }),
    );
    server = await startSessiond({ args: ["--auth-tokens", file] });
    const all = client(TOKEN_ALL);
    for (const [workspace, sessionId] of [
      ["alpha", "a-one"],
      ["alpha", "a-two"],
      ["beta", "b-one"],
      ["Gamma", "g-one"],
      ["delta", "d-gone"],
    ]) {
      await all.store.createSession({ workspace, sessionId });
    }
    await all.store.createSession({
      workspace: "alpha",
      sessionId: "a-helper",
      parentSessionId: "a-one",
      agentType: "helper",
    });
    await all.store.deleteSession({ workspace: "delta", session: "d-gone" });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
    if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
  });

  it.each(["grpc", "connect", "grpc-web"] as const)(
    "pages through the workspaces that hold sessions, by name, with their counts (%s)",
    async (protocol) => {
      const expected = [row("Gamma", 1, 0), row("alpha", 2, 1), row("beta", 1, 0)];
      const whole = await client(TOKEN_ALL, protocol).store.listWorkspaces({});
      expect(whole.workspaces).toMatchObject(expected);
      expect(whole.nextPageToken).toBe("");
      const paged = await everyPage(TOKEN_ALL, 1, protocol);
      expect(paged.workspaces).toMatchObject(expected);
      expect(paged.pages).toBe(3);
    },
  );

  it("lists only the workspaces a scoped token may use, and of those the ones holding sessions", async () => {
    const { workspaces } = await everyPage(TOKEN_SOME, 1);
    expect(workspaces).toMatchObject([row("alpha", 2, 1)]);
  });

  it("refuses a page size over the limit and a page token it did not issue, naming them", async () => {
    const c = client(TOKEN_ALL);
    await expectCode(
      c.store.listWorkspaces({ pageSize: 1001 }),
      Code.InvalidArgument,
      "page_size 1001",
    );
    await expectCode(
      c.store.listWorkspaces({ pageToken: "garbage" }),
      Code.InvalidArgument,
      "page_token",
    );
    // A ListSessions token is not a ListWorkspaces one.
    const sessions = await c.store.listSessions({ workspace: "alpha", pageSize: 1 });
    expect(sessions.nextPageToken).not.toBe("");
    await expectCode(
      c.store.listWorkspaces({ pageToken: sessions.nextPageToken }),
      Code.InvalidArgument,
      "page_token",
    );
  });

  it("needs a token like every other call (UNAUTHENTICATED)", async () => {
    await expectCode(client().store.listWorkspaces({}), Code.Unauthenticated);
  });
});
