/**
 * A response larger than `--max-message-bytes` (a GetEntries page of big
 * entries) fails for the client with RESOURCE_EXHAUSTED and a message that
 * names the flag, over every protocol, and the request log records that
 * code, not "ok". A response under the limit still arrives whole.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Protocol } from "../../src/client/index.js";
import { removeDataDir } from "../harness/server.js";
import { textOf, user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { requestLog } from "./support/request-log.js";
import {
  client,
  PROTOCOLS,
  type SessiondProcess,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";

const MAX_MESSAGE_BYTES = 65_536;
/** Each entry fits in a request; four of them do not fit in one response. */
const ENTRY_TEXT = "x".repeat(20_000);

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond({ args: ["--max-message-bytes", String(MAX_MESSAGE_BYTES)] });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

/** A session of four ~20 KB entries after its root, in a workspace of its own. */
async function bigSession(protocol: Protocol): Promise<{ ws: string; id: string }> {
  const c = client(server.url, protocol);
  const ws = uniqueWorkspace(`oversize-${protocol}`);
  const { session } = await c.store.createSession({ workspace: ws });
  const id = session?.id ?? "";
  for (let i = 0; i < 4; i++) {
    await c.session.append({ workspace: ws, session: id, entries: [user(ENTRY_TEXT)] });
  }
  return { ws, id };
}

describe.each(PROTOCOLS)("a response over --max-message-bytes, over %s", (protocol) => {
  it("fails RESOURCE_EXHAUSTED with a message naming --max-message-bytes", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const err = await expectCode(
      c.session.getEntries({ workspace: ws, session: id }),
      Code.ResourceExhausted,
      `exceeds the server's max message size ${MAX_MESSAGE_BYTES} (--max-message-bytes)`,
    );
    expect(err.rawMessage).toMatch(/^response of \d+ bytes exceeds/);
    expect(err.rawMessage).not.toContain("writeMaxBytes");
  });

  it("is logged with RESOURCE_EXHAUSTED, not ok", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    await expectCode(c.session.getEntries({ workspace: ws, session: id }), Code.ResourceExhausted);
    const lines = () =>
      requestLog(server).filter(
        (l) => l.workspace === ws && l.method === "sessiond.v1.SessionService/GetEntries",
      );
    await eventually(() => lines().length > 0, 5_000, "the GetEntries log line");
    expect(lines().map((l) => l.code)).toEqual(["ResourceExhausted"]);
  });

  it("a response under the limit arrives whole", async () => {
    const { ws, id } = await bigSession(protocol);
    const c = client(server.url, protocol);
    const page = await c.session.getEntries({ workspace: ws, session: id, afterSeq: 1n, limit: 2 });
    const texts = page.entries.map((e) => [
      e.seq,
      textOf(e.kind.case === "message" ? e.kind.value : undefined),
    ]);
    expect(texts).toEqual([
      [2n, ENTRY_TEXT],
      [3n, ENTRY_TEXT],
    ]);
    expect(page.headSeq).toBe(5n);
  });
});
