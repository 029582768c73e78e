/**
 * The Python toolchain the interop tests need: Debian's python3-grpcio,
 * python3-protobuf and protobuf-compiler for /usr/bin/python3. Without them
 * a test skips loudly, except under CI=true (CI installs them, so a missing
 * one there is a failure).
 */

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export const PYTHON = "/usr/bin/python3";
export const PYTHON_INSTALL =
  "apt-get install -y --no-install-recommends python3-grpcio python3-protobuf protobuf-compiler";

/** Why the Python toolchain is unusable here, or undefined when it is fine. */
export function missingPythonTools(): string | undefined {
  if (!existsSync(PYTHON)) return `${PYTHON} not found`;
  const py = spawnSync(PYTHON, ["-c", "import grpc, google.protobuf"], { timeout: 15_000 });
  if (py.status !== 0) return `${PYTHON} cannot import grpc / google.protobuf (${PYTHON_INSTALL})`;
  const protoc = spawnSync("protoc", ["--version"], { timeout: 15_000 });
  if (protoc.status !== 0) return `protoc not found (${PYTHON_INSTALL})`;
  return undefined;
}
