import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { plaintextPort, SETTINGS_FIRST_MS } from "./plaintext-port.js";

/** SETTINGS is HTTP/2 frame type 4 (RFC 9113 §6.5); a frame header is 9 bytes. */
const SETTINGS_TYPE = 4;

let port: net.Server | undefined;
afterEach(() => new Promise<void>((resolve) => (port ? port.close(() => resolve()) : resolve())));

async function listen(settingsFirstMs = SETTINGS_FIRST_MS): Promise<number> {
  const h2 = http2.createServer((_req, res) => res.end("h2"));
  const h1 = http.createServer((_req, res) => res.end("h1"));
  port = plaintextPort(h2, h1, 0, settingsFirstMs);
  await new Promise<void>((resolve) => port?.listen(0, "127.0.0.1", resolve));
  return (port.address() as net.AddressInfo).port;
}

/** Connects, writes `send` (if any), and collects what arrives within `ms`. */
function exchange(at: number, send: Buffer | undefined, ms: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(at, "127.0.0.1", () => {
      if (send !== undefined) socket.write(send);
      setTimeout(() => {
        socket.destroy();
        resolve(Buffer.concat(chunks));
      }, ms);
    });
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", reject);
  });
}

describe("plaintext port", () => {
  it("a client that waits for the server to speak first gets its SETTINGS frame", async () => {
    const got = await exchange(await listen(), undefined, SETTINGS_FIRST_MS + 250);
    expect(got.length).toBeGreaterThanOrEqual(9);
    expect(got[3]).toBe(SETTINGS_TYPE);
  });

  it("by default the port waits for the client: a silent client gets nothing, a late HTTP/1.1 request its answer", async () => {
    const at = await listen(0);
    expect((await exchange(at, undefined, SETTINGS_FIRST_MS + 250)).length).toBe(0);
    const chunks: Buffer[] = [];
    const socket = net.connect(at, "127.0.0.1");
    socket.on("data", (d) => chunks.push(d));
    await new Promise((resolve) => setTimeout(resolve, SETTINGS_FIRST_MS + 100));
    socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await new Promise((resolve) => socket.once("close", resolve));
    expect(Buffer.concat(chunks).toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("an HTTP/1.1 request that came during a stall of the event loop longer than the wait is answered over HTTP/1.1", async () => {
    const at = await listen();
    const accepted = new Promise<void>((resolve) => port?.once("connection", () => resolve()));
    const chunks: Buffer[] = [];
    const socket = net.connect(at, "127.0.0.1");
    socket.on("data", (d) => chunks.push(d));
    await accepted;
    socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const stalled = Date.now() + SETTINGS_FIRST_MS * 5;
    while (Date.now() < stalled) {} // the server's timer is due when the loop turns again
    await new Promise((resolve) => socket.once("close", resolve));
    expect(Buffer.concat(chunks).toString("latin1")).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("an HTTP/1.1 request sent at once is answered over HTTP/1.1, with no HTTP/2 bytes first", async () => {
    const request = Buffer.from("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const got = await exchange(await listen(), request, SETTINGS_FIRST_MS + 250);
    expect(got.toString("latin1")).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nh1$/);
  });
});
