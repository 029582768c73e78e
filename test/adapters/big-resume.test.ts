/**
 * Both SDK adapters resume a big session in a new process (issue 36): a
 * coding agent's turns with ~350 KB tool outputs and repeated 1 MiB
 * screenshots, written through the adapter, then read back by a fresh
 * process through a fresh client and adapter: what it gets equals, item for
 * item (line for line), what was written. SESSIOND_BIG_RESUME_TURNS=200
 * makes the issue's ~100 MB session (by hand: CI runs 20 turns, ~10 MB).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BlobPart } from "../../gen/sessiond/v1/entry_pb.js";
import { SessiondSessionStore } from "../../src/adapters/claude-agent-sdk/index.js";
import { SessiondSession } from "../../src/adapters/openai-agents/index.js";
import { createSessiondClient } from "../../src/client/index.js";
import { REPO } from "../harness/server.js";
import { claudeTurn, digest, lastOfTurn, openaiTurn, TURNS } from "./big-resume-data.js";
import { type AdapterServer, dataDir, serveDir } from "./support.js";

const run = promisify(execFile);
let dir: Awaited<ReturnType<typeof dataDir>>;
let srv: AdapterServer;

beforeAll(async () => {
  dir = await dataDir();
  srv = await serveDir(dir.dir);
});
afterAll(async () => {
  await srv?.close();
  await dir?.remove();
});

async function readInChild(args: Record<string, unknown>) {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", join(REPO, "test/adapters/big-resume-child.ts"), JSON.stringify(args)],
    { cwd: REPO, maxBuffer: 1 << 20, timeout: 600_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
    count: number;
    digest: string;
    ms: number;
  };
}

/** Distinct image blobs a session's entries reference. */
async function imageBlobs(session: string): Promise<number> {
  const raw = createSessiondClient({ baseUrl: srv.server.url, blobs: "refs" });
  const images = new Set<string>();
  let after = 0n;
  for (;;) {
    const page = await raw.session.getEntries({ session, afterSeq: after });
    for (const e of page.entries) {
      for (const p of e.kind.case === "message" ? e.kind.value.content : []) {
        if (p.part.case === "blob" && p.part.value.part === BlobPart.IMAGE)
          images.add(p.part.value.sha256);
      }
    }
    after = page.entries.at(-1)?.seq ?? page.headSeq;
    if (page.entries.length === 0 || after >= page.headSeq) break;
  }
  return images.size;
}

describe(`a big session (${TURNS} turns) resumed in a new process`, () => {
  test("OpenAI Agents: getItems in a new process equals the items added", {
    timeout: 900_000,
  }, async () => {
    const session = new SessiondSession({ client: srv.client, title: "big resume" });
    const written = [];
    for (let t = 0; t < TURNS; t++) {
      const items = openaiTurn(t);
      await session.addItems(items);
      written.push(...items);
    }
    const got = await readInChild({
      url: srv.server.url,
      kind: "openai",
      sessionId: await session.getSessionId(),
    });
    console.log(`openai-agents: ${written.length} items resumed in ${Math.round(got.ms)} ms`);
    expect(got.count).toBe(written.length);
    expect(got.digest).toBe(digest(written));
    // The screenshots are image parts, kept once: five distinct blobs however many turns.
    expect(await imageBlobs(await session.getSessionId())).toBe(Math.min(5, Math.ceil(TURNS / 9)));
  });

  test("Claude Agent SDK: load in a new process equals the lines appended", {
    timeout: 900_000,
  }, async () => {
    const store = new SessiondSessionStore({ client: srv.client });
    const key = { projectKey: "big-resume", sessionId: crypto.randomUUID() };
    const written = [];
    let parent: string | null = null;
    for (let t = 0; t < TURNS; t++) {
      const lines = claudeTurn(key.sessionId, t, parent);
      await store.append(key, lines);
      written.push(...lines);
      parent = lastOfTurn(t);
    }
    const got = await readInChild({ url: srv.server.url, kind: "claude", ...key });
    console.log(`claude-agent-sdk: ${written.length} lines resumed in ${Math.round(got.ms)} ms`);
    expect(got.count).toBe(written.length);
    expect(got.digest).toBe(digest(written));
    // The screenshots are image parts, kept once (not in the carried lines).
    expect(await imageBlobs(key.sessionId)).toBe(Math.min(5, Math.ceil(TURNS / 9)));
  });
});
