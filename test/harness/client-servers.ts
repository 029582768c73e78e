/**
 * What the client test files (Go, Java, the conformance runners) set up
 * around a client's own suite: a second server with TLS and a bearer token,
 * and the restart handshake of conformance/README.md ("Restarts"): a client
 * writes `restart-<n>.request` into a directory, the server is restarted on
 * the same port and data dir, and `restart-<n>.done` says it is back.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeCertificates } from "./certs.js";
import { type SessiondProcess, startSessiond } from "./server.js";

/** A server on memory storage that wants TLS (a CA made in `dir`) and `token`. */
export async function startTlsTokenServer(
  dir: string,
  token: string,
): Promise<{ server: SessiondProcess; ca: string }> {
  const certs = makeCertificates(dir);
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ tokens: [{ token, workspaces: ["*"] }] }));
  const server = await startSessiond({
    args: [
      ...["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey],
      ...["--auth-tokens", tokens, "--storage", "memory"],
    ],
  });
  return { server, ca: certs.ca };
}

export interface RestartService {
  /** The server now running (a new process after each restart). */
  current(): SessiondProcess;
  /** The pids of the stopped and started processes, in pairs. */
  readonly pids: number[];
  /** Stops answering requests; waits for a restart under way. */
  stop(): Promise<void>;
}

/** Answers the restart handshake in `dir` for `server` until stopped. */
export function serveRestarts(dir: string, server: SessiondProcess): RestartService {
  let current = server;
  let served = 0;
  let restarting = Promise.resolve();
  const pids: number[] = [];
  const poll = setInterval(() => {
    const next = served + 1;
    if (!existsSync(join(dir, `restart-${next}.request`))) return;
    served = next;
    restarting = restarting.then(async () => {
      const old = current;
      await old.stop();
      current = await startSessiond({ port: old.port, dataDir: old.dataDir });
      pids.push(old.proc.pid as number, current.proc.pid as number);
      writeFileSync(join(dir, `restart-${next}.done`), "");
    });
  }, 50);
  return {
    current: () => current,
    pids,
    async stop() {
      clearInterval(poll);
      await restarting;
    },
  };
}
