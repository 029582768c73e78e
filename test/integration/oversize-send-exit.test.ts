/**
 * A request the server refuses as too large must not keep the sender's
 * process alive. The server answers (RESOURCE_EXHAUSTED) while the client is
 * still uploading the rest of the message, and reads that rest only to drop
 * it: unless the client ends that stream itself, the stream stays open
 * until the server gives up on it, and keeps the HTTP/2 connection, and so
 * Node, running. Both the CLI and a library caller that just returns must
 * exit, with the error, over every protocol.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Protocol } from "../../src/client/index.js";
import {
  BIN,
  REPO,
  removeDataDir,
  type SessiondProcess,
  startSessiond,
} from "../harness/server.js";

const PROTOCOLS: Protocol[] = ["grpc", "connect", "grpc-web"];
/** Over the server's default 4 MiB, and inline: under half the client's raised limit. */
const TEXT_BYTES = 5_000_000;
const CLIENT_LIMIT = 2 * TEXT_BYTES + 1;
/** A process still running this long after its call failed is hanging. */
const EXIT_WITHIN_MS = 8_000;

let server: SessiondProcess;

beforeAll(async () => {
  server = await startSessiond();
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the process had to be killed. */
  hung: boolean;
}

/** Runs `child` to its end, killing it (and reporting `hung`) after `withinMs`. */
function exitOf(child: ChildProcess, input?: string, withinMs = EXIT_WITHIN_MS): Promise<Exit> {
  return new Promise((done) => {
    let stdout = "";
    let stderr = "";
    let hung = false;
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, withinMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, hung });
    });
    child.stdin?.end(input ?? "");
  });
}

/** A library caller: one oversize Append, the error printed, one more call, then nothing left to do. */
function libraryScript(protocol: Protocol): string {
  const client = new URL("../../src/client/index.ts", import.meta.url).pathname;
  return `
import { createSessiondClient } from ${JSON.stringify(client)};
const c = createSessiondClient({
  baseUrl: ${JSON.stringify(server.url)},
  protocol: ${JSON.stringify(protocol)},
  maxMessageBytes: ${CLIENT_LIMIT},
});
const { session } = await c.store.createSession({ title: "oversize" });
const text = "x".repeat(${TEXT_BYTES});
try {
  await c.session.append({
    session: session.id,
    entries: [{ kind: { case: "message", value: { role: 1, content: [{ part: { case: "text", value: text } }] } } }],
  });
  console.log("appended");
} catch (err) {
  console.log("failed: " + err.code);
}
await c.store.createSession({ title: "after" });
console.log("next call: ok");
`;
}

/** A library caller that sends `count` oversize Appends in a row, then one ordinary call. */
function repeatedScript(protocol: Protocol, count: number): string {
  const client = new URL("../../src/client/index.ts", import.meta.url).pathname;
  return `
import { createSessiondClient } from ${JSON.stringify(client)};
const c = createSessiondClient({
  baseUrl: ${JSON.stringify(server.url)},
  protocol: ${JSON.stringify(protocol)},
  maxMessageBytes: ${CLIENT_LIMIT},
});
const { session } = await c.store.createSession({ title: "oversize, again and again" });
const text = "x".repeat(${TEXT_BYTES});
const codes = [];
for (let i = 0; i < ${count}; i++) {
  const entry = { kind: { case: "message", value: { role: 1, content: [{ part: { case: "text", value: text } }] } } };
  codes.push(await c.session.append({ session: session.id, entries: [entry] }).then(() => "ok", (err) => err.code));
}
console.log(codes.join(","));
await c.store.createSession({ title: "after" });
console.log("next call: ok");
`;
}

describe("a send the server refuses as too large", () => {
  for (const protocol of PROTOCOLS) {
    it(`lets the CLI exit with the error over ${protocol}`, async () => {
      const created = await exitOf(
        spawn(process.execPath, [BIN, "new", "--server", server.url, "--title", "oversize"], {
          cwd: REPO,
        }),
      );
      const id = created.stdout.trim();
      const args = ["append", id, "--stdin", "--server", server.url, "--protocol", protocol];
      const child = spawn(process.execPath, [
        BIN,
        ...args,
        "--max-message-bytes",
        String(CLIENT_LIMIT),
      ]);
      const r = await exitOf(child, "x".repeat(TEXT_BYTES));
      expect(r.hung).toBe(false);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/\(resource_exhausted\)\n$/);
    });

    it(`lets a library caller go on and its process exit over ${protocol}`, async () => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", libraryScript(protocol)],
        { cwd: REPO },
      );
      const r = await exitOf(child);
      expect(r.hung).toBe(false);
      expect(r.stdout).toBe("failed: 8\nnext call: ok\n");
      expect(r.code).toBe(0);
    });
  }

  for (const protocol of PROTOCOLS) {
    it(`ten in a row leave the connection usable over ${protocol}`, async () => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", repeatedScript(protocol, 10)],
        { cwd: REPO },
      );
      const r = await exitOf(child, undefined, 30_000);
      expect(r.hung).toBe(false);
      expect(r.stdout).toBe(`${Array(10).fill("8").join(",")}\nnext call: ok\n`);
      expect(r.code).toBe(0);
    });
  }
});
