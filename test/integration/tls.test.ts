import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import { makeCertificates } from "../harness/certs.js";
import { type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * TLS: one port serves HTTP/2 (gRPC) and HTTP/1.1 (Connect) when given a
 * certificate, and with --tls-client-ca it requires client certificates
 * (mTLS). Certificates are made with openssl at test time (harness/certs.ts).
 */
const dir = mkdtempSync(join(tmpdir(), "sessiond-tls-"));
const file = (name: string) => join(dir, name);

describe("TLS and mTLS", () => {
  let tls: SessiondProcess;
  let mtls: SessiondProcess;
  const ca = () => readFileSync(file("ca.crt"));

  beforeAll(async () => {
    makeCertificates(dir);
    const certFlags = ["--tls-cert", file("server.crt"), "--tls-key", file("server.key")];
    tls = await startSessiond({ args: [...certFlags, "--storage", "memory"] });
    mtls = await startSessiond({
      args: [...certFlags, "--tls-client-ca", file("ca.crt"), "--storage", "memory"],
    });
  });

  afterAll(async () => {
    await tls?.stop();
    await mtls?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves gRPC over HTTP/2 with TLS", async () => {
    expect(tls.url.startsWith("https://")).toBe(true);
    const client = createSessiondClient({ baseUrl: tls.url, protocol: "grpc", tls: { ca: ca() } });
    const { session } = await client.store.createSession({ title: "over tls" });
    expect(session?.title).toBe("over tls");
  });

  it("falls back to HTTP/1.1 for the Connect protocol", async () => {
    const transport = createConnectTransport({
      baseUrl: tls.url,
      httpVersion: "1.1",
      nodeOptions: { ca: ca() },
    });
    const store = createClient(StoreService, transport);
    const { session } = await store.createSession({ title: "http/1.1" });
    expect(session?.title).toBe("http/1.1");
  });

  it("with --tls-client-ca, a client certificate signed by the CA is accepted", async () => {
    const client = createSessiondClient({
      baseUrl: mtls.url,
      tls: {
        ca: ca(),
        cert: readFileSync(file("client.crt")),
        key: readFileSync(file("client.key")),
      },
      retry: false,
    });
    const { session } = await client.store.createSession({ title: "mtls" });
    expect(session?.title).toBe("mtls");
  });

  it("with --tls-client-ca, a client without a certificate is refused", async () => {
    const client = createSessiondClient({ baseUrl: mtls.url, tls: { ca: ca() }, retry: false });
    const err = await client.store.createSession({ title: "no cert" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err).toBeDefined();
    expect([Code.Unavailable, Code.Unknown, Code.Internal]).toContain(err?.code);
    expect(mtls.proc.exitCode).toBeNull();
  });
});
