import type { SessiondProcess } from "../../harness/server.js";

/** One line of the server's request log (src/server/ops/call-log.ts). */
export interface LogLine {
  time: string;
  method: string;
  workspace?: string;
  session?: string;
  code: string;
  ms: number;
  error?: string;
  /** "error", "warn", "info" or "debug" (src/server/ops/logger.ts). */
  level?: string;
  /** The trace id: the caller's traceparent, or the server's own span's. */
  trace?: string;
}

/** The request log lines a server process has written to stderr so far. */
export function requestLog(server: SessiondProcess): LogLine[] {
  return server
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}
