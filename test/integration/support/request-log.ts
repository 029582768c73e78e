import type { SessiondProcess } from "../../harness/server.js";

/** One line of the server's request log (src/server/call-log.ts). */
export interface LogLine {
  time: string;
  method: string;
  workspace?: string;
  session?: string;
  code: string;
  ms: number;
  error?: string;
}

/** The request log lines a server process has written to stderr so far. */
export function requestLog(server: SessiondProcess): LogLine[] {
  return server
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}
