/**
 * Refused uploads must not wear out the client's connection. The server
 * answers a request over its --max-message-bytes (RESOURCE_EXHAUSTED) once
 * it has read the length prefix, while the client is still uploading the
 * rest. A server that stops reading there leaves the rest queued in the
 * client: over gRPC-Web on HTTP/2, Node's client refuses new streams after
 * three 5 MB requests (ENHANCE_YOUR_CALM) and every call after fails, the
 * ordinary ones too; over Connect on HTTP/1.1 every other call waits for
 * its deadline. So the server reads the rest and drops it
 * (server/http/unread-rest.ts). Bare connect-node transports (not the sessiond
 * client, which ends answered uploads itself: client/answered-upload.ts),
 * one per protocol and HTTP version, each in a process of its own so that
 * an uncaught exception of the client shows.
 */
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../harness/server.js";
import { ownServers } from "./support/own-servers.js";
import { EXTERNAL, type SessiondProcess, skipExternal } from "./support/server.js";
import { WAYS, type Way } from "./support/ways.js";

if (EXTERNAL) skipExternal("refused uploads (needs a server with the default limits of its own)");

/** Over the server's default max message size of 4 MiB. */
const TEXT_BYTES = 5_000_000;
const REFUSED = 10;
/** A call that takes longer than this on loopback is waiting for something that will not come. */
const CALL_TIMEOUT_MS = 5_000;
/** The whole client process; then it is killed and reported hung. */
const CLIENT_WITHIN_MS = 60_000;

const own = ownServers();

/**
 * The client: REFUSED oversize Appends, each printed with its code, then an
 * ordinary call; any uncaught exception or unhandled rejection is printed.
 */
function clientScript(url: string, way: Way): string {
  const at = (p: string) => JSON.stringify(new URL(p, import.meta.url).pathname);
  return `
import { createClient } from "@connectrpc/connect";
import { SessionService } from ${at("../../gen/sessiond/v1/session_service_pb.ts")};
import { StoreService } from ${at("../../gen/sessiond/v1/store_service_pb.ts")};
import { user } from ${at("./support/entries.ts")};
import { transportOf } from ${at("./support/ways.ts")};
process.on("uncaughtException", (err) => { console.log("uncaught: " + err); process.exit(3); });
process.on("unhandledRejection", (err) => { console.log("unhandled: " + err); process.exit(4); });
const transport = transportOf(${JSON.stringify(url)}, ${JSON.stringify(way)}, { writeMaxBytes: ${2 * TEXT_BYTES} });
const session = createClient(SessionService, transport);
const text = "x".repeat(${TEXT_BYTES});
const codes = [];
for (let i = 0; i < ${REFUSED}; i++) {
  codes.push(await session
    .append({ workspace: "w", session: "s", entries: [user(text)] }, { timeoutMs: ${CALL_TIMEOUT_MS} })
    .then(() => "accepted", (err) => err.code + " " + err.rawMessage));
}
console.log(codes.join("\\n"));
await createClient(StoreService, transport)
  .listSessions({ workspace: "w" }, { timeoutMs: ${CALL_TIMEOUT_MS} })
  .then(() => console.log("next call: ok"), (err) => console.log("next call: " + err));
process.exit(0);
`;
}

function run(script: string): Promise<{ code: number | null; stdout: string; hung: boolean }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] },
    );
    let stdout = "";
    let hung = false;
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, CLIENT_WITHIN_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, hung });
    });
  });
}

/** RESOURCE_EXHAUSTED (8), naming the flag (Connect refuses by the content-length, which gives no message size). */
const REFUSAL =
  /^8 request (of 5000028 bytes )?is over the server's max message size of 4194304 bytes: raise the server's --max-message-bytes/;

describe.skipIf(EXTERNAL).each([
  ["grpc-js", WAYS],
  ["connect", WAYS.filter(([protocol]) => protocol === "grpc")],
] as const)("on --grpc-server %s", (grpcServer, ways) => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await own.server(["--grpc-server", grpcServer]);
  });

  describe.each(ways)("over %s on HTTP/%s", (protocol, httpVersion) => {
    it(`${REFUSED} refused 5 MB uploads in a row leave the connection usable`, async () => {
      const r = await run(clientScript(server.url, [protocol, httpVersion]));
      expect(r.hung).toBe(false);
      expect(r.stdout.split("\n").slice(0, REFUSED)).toEqual(
        Array(REFUSED).fill(expect.stringMatching(REFUSAL)),
      );
      expect(r.stdout.split("\n").slice(REFUSED)).toEqual(["next call: ok", ""]);
      expect(r.code).toBe(0);
    });
  });
});
