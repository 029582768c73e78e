/**
 * The Python toolchain the interop tests need: grpcio and protobuf from PyPI,
 * at the versions pinned in scripts/gen-tools/requirements.txt, in the venv
 * that scripts/gen-tools.sh makes for `npm run generate` (.cache/gen/venv),
 * and the pinned protoc beside it (.cache/gen/bin/protoc, from Maven
 * Central). Without them a test skips loudly, except under CI=true (.ci/run
 * installs them, so a missing one there is a failure).
 */

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./server.js";

/** The venv's python: grpcio and protobuf (pinned) importable. */
export const PYTHON = join(REPO, ".cache/gen/venv/bin/python");
/** protoc (pinned, Maven Central): writes the Python messages of the bare interop tests. */
export const PROTOC = join(REPO, ".cache/gen/bin/protoc");
export const PYTHON_INSTALL = "bash scripts/gen-tools.sh (needs python3, go and mvn)";

/** Why the Python toolchain is unusable here, or undefined when it is fine. */
export function missingPythonTools(): string | undefined {
  if (!existsSync(PYTHON)) return `${PYTHON} not found (${PYTHON_INSTALL})`;
  const py = spawnSync(PYTHON, ["-c", "import grpc, google.protobuf"], { timeout: 15_000 });
  if (py.status !== 0) return `${PYTHON} cannot import grpc / google.protobuf (${PYTHON_INSTALL})`;
  if (!existsSync(PROTOC)) return `${PROTOC} not found (${PYTHON_INSTALL})`;
  return undefined;
}
