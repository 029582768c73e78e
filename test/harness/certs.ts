/**
 * Certificates for TLS tests, made with openssl at test time: a CA, a server
 * certificate for 127.0.0.1 and a client certificate, both signed by the CA.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** Writes the certificates into `dir` and returns their paths. */
export function makeCertificates(dir: string): TestCertificates {
  const openssl = (...args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  const days = ["-days", "2"];
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    ...days,
    "-subj",
    "/CN=test-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
  for (const who of ["server", "client"]) {
    openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      `/CN=${who}`,
      "-keyout",
      `${who}.key`,
      "-out",
      `${who}.csr`,
    );
    openssl(
      "x509",
      "-req",
      "-in",
      `${who}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      ...days,
      "-extfile",
      "san.ext",
      "-out",
      `${who}.crt`,
    );
  }
  const at = (name: string) => join(dir, name);
  return {
    ca: at("ca.crt"),
    serverCert: at("server.crt"),
    serverKey: at("server.key"),
    clientCert: at("client.crt"),
    clientKey: at("client.key"),
  };
}
