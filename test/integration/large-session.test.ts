import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../gen/sessiond/v1/session_pb.js";
import {
  createSessiondClient,
  type Protocol,
  readState,
  readTree,
  type SessiondClient,
} from "../../src/client/index.js";
import { openStore } from "../../src/index.js";
import {
  BIN,
  REPO,
  removeDataDir,
  type SessiondProcess,
  startSessiond,
} from "../harness/server.js";

/**
 * A session far larger than one response (--max-message-bytes, 4 MiB by
 * default): its tree (~15 MB) and state (~6 MB) must still be readable, page
 * by page, through the client helpers and `sessiond show`, with the
 * server's default limits. The session is written through the embedded
 * store on a JSONL data dir (seconds, where appends over RPC would take
 * minutes), then served from that dir.
 */
const ENTRIES = Number(process.env.SESSIOND_LARGE_SESSION_ENTRIES ?? 100_000);
const MESSAGES = ENTRIES - 1; // the root SessionInfo is not a message
const SESSION = "large-session";
const SLOW_MS = 180_000;

let server: SessiondProcess;
let dataDir: string;
const clients = new Map<Protocol, SessiondClient>();

async function writeSession(dir: string): Promise<void> {
  const store = openStore({ dataDir: dir });
  try {
    await store.create({ sessionId: SESSION, title: "large" });
    const session = await store.open(undefined, SESSION);
    for (let done = 0; done < MESSAGES; ) {
      const batch = [];
      for (let k = 0; k < 1000 && done < MESSAGES; k++, done++) {
        const role = done % 2 === 0 ? Role.USER : Role.ASSISTANT;
        const text = `message ${done} of the large session`;
        batch.push({
          id: `m${done}`,
          kind: { case: "message" as const, value: { role, content: [textPart(text)] } },
        });
      }
      await session.append(batch);
    }
  } finally {
    await store.close();
  }
}

function textPart(value: string) {
  return { part: { case: "text" as const, value } };
}

/**
 * Runs `sessiond ARGS` against the server. Megabytes of output: bytes are
 * joined before decoding (a character can straddle two chunks) and the
 * result waits for "close" (after "exit", output may still be in flight).
 */
function sessiond(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [BIN, ...args, "--server", server.url], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SESSIOND_URL: "", SESSIOND_TOKEN: "", NO_COLOR: "1" },
    });
    const out: Buffer[] = [];
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => out.push(d));
    proc.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    proc.once("error", fail);
    proc.once("close", (code) => done({ code, stdout: Buffer.concat(out).toString(), stderr }));
  });
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-large-"));
  await writeSession(dataDir);
  // Explicit jsonl: the data was written to this dir, also when the suite runs on PostgreSQL.
  server = await startSessiond({ dataDir, args: ["--storage", "jsonl"] });
  for (const protocol of ["grpc", "connect"] as const) {
    clients.set(protocol, createSessiondClient({ baseUrl: server.url, protocol }));
  }
}, SLOW_MS);

afterAll(async () => {
  await server?.stop();
  if (dataDir) await removeDataDir(dataDir);
});

describe(`a ${ENTRIES}-entry session, larger than one response`, () => {
  it(
    "sessiond show prints every entry with the default limits",
    async () => {
      const r = await sessiond(["show", SESSION]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = lines(r.stdout);
      expect(out).toHaveLength(ENTRIES);
      expect(out[out.length - 1]).toMatch(new RegExp(`message ${MESSAGES - 1} of .*← leaf`));
    },
    SLOW_MS,
  );

  it(
    "sessiond show --state prints every message with the default limits",
    async () => {
      const r = await sessiond(["show", "--state", SESSION]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = lines(r.stdout);
      expect(out).toHaveLength(MESSAGES);
      expect(out[0]).toBe("user: message 0 of the large session");
      expect(out[MESSAGES - 1]).toContain(`message ${MESSAGES - 1} of`);
    },
    SLOW_MS,
  );

  it(
    "sessiond show --history --json prints one GetState response with every page merged",
    async () => {
      const r = await sessiond(["show", "--history", "--json", SESSION]);
      expect(r.code).toBe(0);
      const res = JSON.parse(r.stdout) as {
        state: { messages: { entryId: string }[]; headSeq: string };
        nextPageToken?: string;
      };
      expect(res.state.messages.map((m) => m.entryId)).toEqual(
        Array.from({ length: MESSAGES }, (_, i) => `m${i}`),
      );
      expect(res.state.headSeq).toBe(String(ENTRIES));
      expect(res.nextPageToken).toBeUndefined();
    },
    SLOW_MS,
  );

  it(
    "readTree and readState return every node and message",
    async () => {
      const client = clients.get("grpc") as SessiondClient;
      const tree = await readTree(client, { session: SESSION });
      expect(tree.nodes.map((n) => n.seq)).toEqual(
        Array.from({ length: ENTRIES }, (_, i) => BigInt(i + 1)),
      );
      expect(tree.nodes.every((n) => n.onCurrentPath)).toBe(true);
      expect(tree.nextPageToken).toBe("");
      const { state } = await readState(client, { session: SESSION });
      expect(state?.messages).toHaveLength(MESSAGES);
      expect(state?.messages[MESSAGES - 1]?.entryId).toBe(`m${MESSAGES - 1}`);
    },
    SLOW_MS,
  );

  it(
    "readState returns every message over Connect JSON, whose pages are sized for JSON",
    async () => {
      const client = clients.get("connect") as SessiondClient;
      const { state } = await readState(client, { session: SESSION, view: View.HISTORY });
      expect(state?.messages).toHaveLength(MESSAGES);
      expect(state?.messages[MESSAGES - 1]?.entryId).toBe(`m${MESSAGES - 1}`);
    },
    SLOW_MS,
  );

  it(
    "a GetTree or GetState without page_size answers a first page and a next page token",
    async () => {
      const client = clients.get("grpc") as SessiondClient;
      const tree = await client.session.getTree({ session: SESSION });
      expect(tree.nodes.length).toBeGreaterThan(0);
      expect(tree.nodes.length).toBeLessThan(ENTRIES);
      expect(tree.nextPageToken).not.toBe("");
      const { state, nextPageToken } = await client.session.getState({ session: SESSION });
      expect(state?.messages.length).toBeLessThan(MESSAGES);
      expect(nextPageToken).not.toBe("");
    },
    SLOW_MS,
  );

  it(
    "pages read while entries are appended describe the first page's snapshot",
    async () => {
      const client = clients.get("grpc") as SessiondClient;
      const { session } = await client.store.createSession({ title: "appended meanwhile" });
      const id = session?.id as string;
      const say = (n: number) => ({
        kind: {
          case: "message" as const,
          value: { role: n % 2 === 0 ? Role.USER : Role.ASSISTANT, content: [textPart(`${n}`)] },
        },
      });
      await client.session.append({ session: id, entries: [0, 1, 2, 3, 4].map(say) });
      const first = await client.session.getTree({ session: id, pageSize: 2 });
      const state1 = await client.session.getState({ session: id, pageSize: 2 });
      await client.session.append({ session: id, entries: [5, 6].map(say) });
      let tree = first.nodes;
      for (let token = first.nextPageToken; token !== ""; ) {
        const page = await client.session.getTree({ session: id, pageSize: 2, pageToken: token });
        expect([page.leafId, page.headSeq]).toEqual([first.leafId, first.headSeq]);
        tree = [...tree, ...page.nodes];
        token = page.nextPageToken;
      }
      expect(tree.map((n) => n.seq)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
      let messages = state1.state?.messages ?? [];
      for (let token = state1.nextPageToken; token !== ""; ) {
        const page = await client.session.getState({ session: id, pageSize: 2, pageToken: token });
        messages = [...messages, ...(page.state?.messages ?? [])];
        token = page.nextPageToken;
      }
      expect(messages.map((m) => m.message?.content[0]?.part.value)).toEqual([
        "0",
        "1",
        "2",
        "3",
        "4",
      ]);
    },
    SLOW_MS,
  );
});
