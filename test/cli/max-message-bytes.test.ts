import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * The client refuses requests over its own limit (4 MiB by default, the
 * server's default) before sending them; against a server that allows more,
 * the CLI must be able to raise it.
 */

const LIMIT = 12 * 1024 * 1024;
/** A message over the 4 MiB default, under the server's limit. */
const BIG_TEXT = "x".repeat(5 * 1024 * 1024);

let server: SessiondProcess;
let client: SessiondClient;

beforeAll(async () => {
  server = await startSessiond({
    args: ["--max-message-bytes", String(LIMIT), "--max-entry-bytes", String(LIMIT)],
  });
  client = createSessiondClient({ baseUrl: server.url, maxMessageBytes: LIMIT });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe("sessiond --max-message-bytes", () => {
  it("append sends a message over 4 MiB to a server that allows it when --max-message-bytes says so", async () => {
    const { session } = await client.store.createSession({ title: "big" });
    const id = session?.id as string;
    const args = ["append", id, "--stdin", "--server", server.url];
    const r = await runCli([...args, "--max-message-bytes", String(LIMIT)], {
      input: BIG_TEXT,
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const { entries } = await client.session.getEntries({ session: id });
    const last = entries.at(-1)?.kind;
    expect(last?.case === "message" && last.value.content[0]?.part.value).toBe(BIG_TEXT);
  });

  it("without the flag a text over 4 MiB still goes: the client uploads it as a blob first, in chunks", async () => {
    // Before blobs this failed with "over the client's limit of 4194304 (raise
    // it with --max-message-bytes": one part was one message.
    const { session } = await client.store.createSession({ title: "too big" });
    const id = session?.id as string;
    const r = await runCli(["append", id, "--stdin", "--server", server.url], {
      input: BIG_TEXT,
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const { entries } = await client.session.getEntries({ session: id });
    const last = entries.at(-1)?.kind;
    expect(last?.case === "message" && last.value.content[0]?.part.value).toBe(BIG_TEXT);
    const raw = createSessiondClient({ baseUrl: server.url, blobs: "refs" });
    const stored = (await raw.session.getEntries({ session: id })).entries.at(-1)?.kind;
    const part = stored?.case === "message" ? stored.value.content[0]?.part : undefined;
    expect(part?.case).toBe("blob");
  });

  it("a request over the client's limit is refused naming the flags to raise, the client's and the server's", async () => {
    const { session } = await client.store.createSession({ title: "over the limit" });
    const id = session?.id as string;
    const r = await runCli(
      ["append", id, "y".repeat(2000), "--max-message-bytes", "1000", "--server", server.url],
      { timeoutMs: 60_000 },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^sessiond: request of \d+ bytes is over the client's limit of 1000: raise it with --max-message-bytes; the server must accept it too \(its --max-message-bytes, and --max-entry-bytes for an entry that large\) \(resource_exhausted\)\n$/,
    );
  });

  it("a library caller's oversize request is refused naming maxMessageBytes, not connect-node's writeMaxBytes", async () => {
    const { session } = await client.store.createSession({ title: "library over the limit" });
    const small = createSessiondClient({ baseUrl: server.url, maxMessageBytes: 1000 });
    const err = await small.session
      .append({
        session: session?.id as string,
        entries: [
          {
            kind: {
              case: "message",
              value: { role: 1, content: [{ part: { case: "text", value: "y".repeat(2000) } }] },
            },
          },
        ],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((err as ConnectError).rawMessage).toMatch(
      /^request of \d+ bytes is over the client's maxMessageBytes \(1000\); the server must accept it too \(its --max-message-bytes, and --max-entry-bytes for an entry that large\)$/,
    );
  });

  it("a --max-message-bytes that is not a positive integer is a usage error", async () => {
    const r = await runCli(["ls", "--max-message-bytes", "0", "--server", server.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("sessiond: --max-message-bytes must be 1..4294967295, got 0\n");
  });
});
