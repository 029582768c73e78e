/**
 * T6 helpers below the typed client: one raw HTTP/2 request (answer as a
 * code name), gRPC envelopes, raw TCP probes, the server's RSS, and a walk
 * of a directory tree. Lifted from test/integration/hostile.test.ts.
 */
import { lstatSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { join, relative } from "node:path";
import { Code } from "@connectrpc/connect";

export interface Answer {
  readonly code: string;
  readonly message: string;
  /** This request's stream was reset by the client (RST_STREAM sent), when known. */
  readonly reset?: boolean;
}

/** One raw HTTP/2 request; the answer as a code name (gRPC or gRPC-Web status, Connect JSON or HTTP status). */
export function rawCall(
  session: http2.ClientHttp2Session,
  path: string,
  contentType: string,
  body: Buffer,
  extra: http2.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    let req: http2.ClientHttp2Stream;
    try {
      req = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": contentType,
        te: "trailers",
        ...extra,
      });
    } catch (err) {
      resolve({ code: "ClientError", message: String(err), reset: false });
      return;
    }
    let reset = false;
    const cancel = () => {
      if (req.closed) return;
      reset = true;
      req.close(http2.constants.NGHTTP2_CANCEL);
    };
    req.setTimeout(10_000, cancel);
    let headers: http2.IncomingHttpHeaders = {};
    let data = "";
    req.on("response", (h) => {
      headers = { ...headers, ...h };
    });
    req.on("trailers", (t) => {
      headers = { ...headers, ...t };
    });
    req.on("data", (d: Buffer) => {
      if (data.length < 100_000) data += d.toString("utf8");
    });
    req.on("error", (e) => resolve({ code: "StreamError", message: String(e), reset }));
    // The answer is complete at the end of the response. A complete exchange needs no
    // RST_STREAM: the stream closes by itself once both sides have ended (resetting it
    // anyway costs the connection one of the server's ~1000 tolerated resets, see
    // t6-hostile.ts). Only an upload the server stopped reading (it answered first,
    // e.g. an oversize body held back by flow control) is cancelled, or it stays open.
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      if (!req.writableFinished) cancel();
      if (contentType.startsWith("application/grpc-web") && headers["grpc-status"] === undefined) {
        // gRPC-Web sends its status in a trailer frame at the end of the body.
        const status = /grpc-status: ?(\d+)\r\n/.exec(data);
        if (status) {
          headers["grpc-status"] = status[1];
          headers["grpc-message"] = /grpc-message: ?([^\r]*)\r\n/.exec(data)?.[1] ?? "";
        }
      }
      const grpc = headers["grpc-status"];
      if (typeof grpc === "string") {
        let message = String(headers["grpc-message"] ?? "");
        try {
          message = decodeURIComponent(message);
        } catch {
          // keep it encoded
        }
        resolve({
          code: grpc === "0" ? "Ok" : (Code[Number(grpc)] ?? `grpc-${grpc}`),
          message,
          reset,
        });
        return;
      }
      const status = Number(headers[":status"]);
      if (contentType.startsWith("application/json") || contentType === "application/proto") {
        try {
          const json = JSON.parse(data) as { code?: string; message?: string };
          const code = (json.code ?? "")
            .split("_")
            .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
            .join("");
          resolve({
            code: code || (status === 200 ? "Ok" : `http-${status}`),
            message: json.message ?? "",
            reset,
          });
          return;
        } catch {
          // fall through to the HTTP status
        }
      }
      resolve({
        code: status === 200 ? "Ok" : `http-${status}`,
        message: data.slice(0, 200),
        reset,
      });
    };
    req.on("end", done);
    req.on("close", done);
    req.end(body);
  });
}

/** A gRPC length-prefixed message. */
export function envelope(payload: Uint8Array, flags = 0, length = payload.length): Buffer {
  const b = Buffer.alloc(5 + payload.length);
  b[0] = flags;
  b.writeUInt32BE(length, 1);
  Buffer.from(payload).copy(b, 5);
  return b;
}

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
export const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

/**
 * Random bytes the server can refuse at once: the first byte is flipped when
 * it could begin a request the server rightly waits to see the rest of, the
 * HTTP/2 preface ("P…") or an HTTP/1.1 request line (a method in capitals, or
 * the empty lines a server skips before one: the cleartext port speaks both).
 * Seen: a single random byte "P", later "G", left the connection open.
 */
export function refusableGarbage(bytes: Buffer): Buffer {
  const first = bytes[0];
  if (
    first !== undefined &&
    (/[A-Z]/.test(String.fromCharCode(first)) || first === 0x0d || first === 0x0a)
  ) {
    bytes[0] = first ^ 0xff;
  }
  return bytes;
}

export function h2frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const b = Buffer.alloc(9 + payload.length);
  b.writeUIntBE(payload.length, 0, 3);
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(stream, 5);
  payload.copy(b, 9);
  return b;
}

/**
 * Writes bytes on a fresh TCP connection. The answer: "closed" (the server
 * dropped the connection), "goaway" (an HTTP/2 GOAWAY with an error code),
 * "http1-<status>" (an HTTP/1.1 error response), or "open" (nothing within
 * `waitMs`).
 */
export function probe(port: number, bytes: Buffer, waitMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1");
    let got = Buffer.alloc(0);
    const verdict = (closed: boolean): Answer => {
      const text = got.subarray(0, 16).toString("latin1");
      const http1 = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (http1 !== null) return { code: `http1-${http1[1]}`, message: "" };
      for (let i = 0; i + 9 <= got.length; i += 9 + got.readUIntBE(i, 3)) {
        if (got[i + 3] === 7 && i + 17 <= got.length && got.readUInt32BE(i + 13) !== 0) {
          return { code: "goaway", message: `error ${got.readUInt32BE(i + 13)}` };
        }
      }
      return { code: closed ? "closed" : "open", message: "" };
    };
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(verdict(false));
    }, waitMs);
    sock.on("data", (d: Buffer) => {
      if (got.length < 65_536) got = Buffer.concat([got, d]);
      // A GOAWAY with an error code is the answer (Node then leaves the socket open
      // until the peer closes it, although RFC 9113 §5.4.1 says it MUST close it).
      const v = verdict(false);
      if (v.code === "goaway" || v.code.startsWith("http1-")) {
        clearTimeout(timer);
        sock.destroy();
        resolve(v);
      }
    });
    sock.on("error", () => {});
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(verdict(true));
    });
    sock.on("connect", () => sock.write(bytes));
  });
}

export interface FloodOutcome {
  /** Streams opened and reset before the connection closed (or all of them). */
  readonly sent: number;
  /** The error code of the GOAWAY the server sent, if any. */
  readonly goaway: number | undefined;
  /** The server closed the connection (GOAWAY with an error code, or the socket). */
  readonly closed: boolean;
  readonly ms: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * A rapid-reset client (CVE-2023-44487): on one connection, opens `streams`
 * requests and resets each right away, 50 per turn of the event loop, and
 * stops when the server closes the connection. Waits up to `waitMs` for the
 * GOAWAY after the last reset.
 */
export async function resetFlood(
  url: string,
  path: string,
  streams: number,
  waitMs: number,
): Promise<FloodOutcome> {
  const started = Date.now();
  const session = http2.connect(url);
  session.on("error", () => {});
  let goaway: number | undefined;
  let closed = false;
  session.on("goaway", (code: number) => {
    goaway ??= code;
    if (code !== 0) closed = true;
  });
  session.on("close", () => {
    closed = true;
  });
  let sent = 0;
  try {
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error("no HTTP/2 connection within 5 s")), 5_000);
      session.once("connect", () => {
        clearTimeout(timer);
        done();
      });
    });
    while (sent < streams && !closed && Date.now() - started < 20_000) {
      for (let i = 0; i < 50 && sent < streams && !closed; i++) {
        let req: http2.ClientHttp2Stream;
        try {
          req = session.request({
            ":method": "POST",
            ":path": path,
            "content-type": "application/grpc",
            te: "trailers",
          });
        } catch {
          closed = true; // the session is going away
          break;
        }
        req.on("error", () => {});
        req.close(http2.constants.NGHTTP2_CANCEL);
        sent++;
      }
      await new Promise((done) => setImmediate(done));
    }
    for (const until = Date.now() + waitMs; !closed && Date.now() < until; ) await sleep(20);
  } finally {
    session.destroy();
  }
  return { sent, goaway, closed, ms: Date.now() - started };
}

/**
 * Investigation only: asks a process started with
 * `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR` for a heap snapshot
 * (taken after a full GC, so its size follows the live heap) and returns the
 * snapshot's size in bytes, deleting the file.
 */
export async function heapSnapshotSize(pid: number, dir: string): Promise<number> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    await sleep(250);
    const name = readdirSync(dir).find((n) => !before.has(n) && n.endsWith(".heapsnapshot"));
    if (name === undefined) continue;
    // Written synchronously by the server's main thread: done when the size holds still.
    let size = -1;
    for (;;) {
      const now = statSync(join(dir, name)).size;
      if (now === size && now > 0) break;
      size = now;
      await sleep(500);
    }
    rmSync(join(dir, name), { force: true });
    return size;
  }
  return Number.NaN;
}

/** The resident set size of a process, bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m === null ? Number.NaN : Number(m[1]) * 1024;
}

/** Everything (relative) under a directory, without following links. */
export function walk(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      out.push(relative(root, p));
      if (lstatSync(p).isDirectory()) visit(p);
    }
  };
  visit(root);
  return out;
}

export function listNames(dir: string): Set<string> {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return new Set<string>();
  }
}

/** A message a client may see: no stack trace, no server path, bounded size. */
export function badMessage(message: string, paths: readonly string[]): string | undefined {
  if (/\n\s+at |\.ts:\d+|\.js:\d+|node_modules/.test(message)) return "stack trace";
  if (paths.some((p) => message.includes(p))) return "server path";
  if (message.length > 2_048) return `message of ${message.length} chars`;
  return undefined;
}
