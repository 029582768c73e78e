/**
 * What the server writes about requests: never a message's content, a
 * title, tool arguments, a search query or a token, whatever the call and
 * however it ends (at the most verbose level, debug); every request line
 * carries its level, and the caller's trace id when the request had a
 * `traceparent`, over every protocol.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { getH1, getH2 } from "../support/prometheus.js";
import { assistant, user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { type LogLine, requestLog } from "./support/request-log.js";
import {
  client,
  EXTERNAL,
  PROTOCOLS,
  type SessiondProcess,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { collect, eventually } from "./support/stream.js";

if (EXTERNAL) skipExternal("log hygiene (needs a server with tokens of its own)");

const API_TOKEN = "api-TOKEN-7f3a9c";
const METRICS_TOKEN = "metrics-TOKEN-91bc2e";
const WRONG_TOKEN = "wrong-TOKEN-55d0aa";
const SECRETS = {
  content: "CONTENT-SECRET-1b2c",
  title: "TITLE-SECRET-3d4e",
  args: "ARGS-SECRET-5f6a",
  answer: "ANSWER-SECRET-7b8c",
  query: "QUERY-SECRET-9d0e",
};
const MAX_MESSAGE_BYTES = 65_536;

let server: SessiondProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-hygiene-"));
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ tokens: [{ token: API_TOKEN, workspaces: ["*"] }] }));
  const metricsToken = join(dir, "metrics-token");
  writeFileSync(metricsToken, `${METRICS_TOKEN}\n`);
  server = await startSessiond({
    args: [
      "--auth-tokens",
      tokens,
      "--metrics-token-file",
      metricsToken,
      "--log-level",
      "debug",
      "--max-message-bytes",
      String(MAX_MESSAGE_BYTES),
    ],
  });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  rmSync(dir, { recursive: true, force: true });
});

/** Sets a header on every call, as a caller's tracing or a bad token would. */
function header(name: string, value: string): Interceptor {
  return (next) => (req) => {
    req.header.set(name, value);
    return next(req);
  };
}

describe.skipIf(EXTERNAL)("the request log", () => {
  it("never holds content, titles, tool arguments, queries or tokens, however a call ends", async () => {
    for (const protocol of PROTOCOLS) {
      const c = client(server.url, protocol, { token: API_TOKEN, retry: false });
      const ws = uniqueWorkspace(`hygiene-${protocol}`);
      const id =
        (await c.store.createSession({ workspace: ws, title: SECRETS.title })).session?.id ?? "";
      const ac = new AbortController();
      const watch = collect(
        c.session.watchEntries({ workspace: ws, session: id }, { signal: ac.signal }),
      );
      await c.session.append({
        workspace: ws,
        session: id,
        entries: [
          user(SECRETS.content, { id: "u1" }),
          assistant(SECRETS.answer, { id: "a1" }, [
            { id: "call-1", name: "shell", arguments: { cmd: SECRETS.args } },
          ]),
        ],
      });
      await watch.waitFor((items) => items.length >= 3, 10_000, "the watched entries");
      ac.abort();
      // Refusals whose requests carry content: a reused id with other content,
      // a message over the size limit, a wrong token.
      await expectCode(
        c.session.append({
          workspace: ws,
          session: id,
          entries: [user(`${SECRETS.content} changed`, { id: "u1" })],
        }),
        Code.AlreadyExists,
      );
      await expectCode(
        c.session.append({
          workspace: ws,
          session: id,
          entries: [user(SECRETS.content.repeat(MAX_MESSAGE_BYTES / 10), { id: "big" })],
        }),
        Code.ResourceExhausted,
      );
      const intruder = client(server.url, protocol, {
        retry: false,
        interceptors: [header("authorization", `Bearer ${WRONG_TOKEN}`)],
      });
      await expectCode(intruder.store.listSessions({ workspace: ws }), Code.Unauthenticated);
      await c.session.getState({ workspace: ws, session: id });
      await c.store.searchEntries({ workspace: ws, query: SECRETS.query });
    }
    for (const get of [getH1, getH2]) {
      expect((await get(server.url, "/metrics")).status).toBe(401);
      expect(
        (await get(server.url, "/metrics", { authorization: `Bearer ${METRICS_TOKEN}` })).status,
      ).toBe(200);
      expect((await get(server.url, "/readyz")).status).toBe(200);
    }
    await eventually(
      () => requestLog(server).filter((l) => l.method === "GET /readyz").length >= 2,
      5_000,
      "the probe lines (debug)",
    );
    const written = server.stderr() + server.stdout();
    for (const secret of [...Object.values(SECRETS), API_TOKEN, METRICS_TOKEN, WRONG_TOKEN]) {
      expect(written).not.toContain(secret);
    }
    const lines = requestLog(server);
    expect(lines.length).toBeGreaterThanOrEqual(PROTOCOLS.length * 8 + 6);
    for (const l of lines) expect(["error", "warn", "info", "debug"]).toContain(l.level);
  }, 120_000);

  it.each(PROTOCOLS)(
    "names the caller's trace id of a %s request that had a traceparent",
    async (protocol) => {
      const traceId = `${protocol === "grpc" ? "a" : protocol === "connect" ? "b" : "c"}${"1".repeat(31)}`;
      const ws = uniqueWorkspace(`trace-log-${protocol}`);
      const traced = client(server.url, protocol, {
        token: API_TOKEN,
        interceptors: [header("traceparent", `00-${traceId}-${"2".repeat(16)}-01`)],
      });
      const plain = client(server.url, protocol, { token: API_TOKEN });
      await traced.store.listSessions({ workspace: ws });
      await plain.store.listSessions({ workspace: ws });
      const mine = (l: LogLine) =>
        l.method === "sessiond.v1.StoreService/ListSessions" && l.workspace === ws;
      await eventually(() => requestLog(server).filter(mine).length === 2, 5_000, "both lines");
      const [first, second] = requestLog(server).filter(mine);
      expect(first?.trace).toBe(traceId);
      // No SDK in the server and no traceparent: no trace to name.
      expect(second?.trace).toBeUndefined();
    },
  );
});
