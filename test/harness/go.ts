/**
 * The Go toolchain the Go client's tests need: the machine's Go (1.26) in
 * module mode, with the module proxy for the versions clients/go/go.sum pins
 * (fetched once into the module cache). Without Go a test skips loudly,
 * except under CI=true (.ci/run has it, so a missing one is a failure).
 *
 * `goUserModule()` is what a user of the client makes: a fresh module that
 * requires github.com/sessiond/sessiond/clients/go, with a `replace` to the
 * checkout, and main packages of its own (README blocks, the trace caller).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./server.js";

/** The Go module of the client, and its import path. */
export const GO_CLIENT_DIR = join(REPO, "clients/go");
export const GO_CLIENT_IMPORT = "github.com/sessiond/sessiond/clients/go";

/** The environment of every go command here: module mode, no cgo. */
export const GO_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GO111MODULE: "on",
  GOFLAGS: "",
  CGO_ENABLED: "0",
};

/** Why the Go toolchain is unusable here, or undefined when it is fine. */
export function missingGoTools(): string | undefined {
  const go = spawnSync("go", ["env", "GOVERSION"], {
    timeout: 15_000,
    encoding: "utf8",
    env: GO_ENV,
  });
  if (go.status !== 0) return "go not found (Go 1.26 with the module proxy is needed)";
  const m = /^go1\.(\d+)/.exec(go.stdout.trim());
  if (m === null || Number(m[1]) < 26) return `go is ${go.stdout.trim()}; clients/go needs go1.26`;
  return undefined;
}

/** A fresh module that requires the client (replace => the checkout). */
export interface GoUserModule {
  dir: string;
  /**
   * Writes `name/main.go` and runs `go mod tidy` (which adds what the code
   * imports); then `go run ./name` in `dir` with GO_ENV runs it.
   */
  writeMain(name: string, code: string): void;
  remove(): void;
}

export function goUserModule(): GoUserModule {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-go-user-"));
  writeFileSync(
    join(dir, "go.mod"),
    [
      "module example.com/sessiond-user",
      "",
      "go 1.26",
      "",
      `require ${GO_CLIENT_IMPORT} v0.0.0`,
      "",
      `replace ${GO_CLIENT_IMPORT} => ${GO_CLIENT_DIR}`,
      "",
    ].join("\n"),
  );
  return {
    dir,
    writeMain(name, code) {
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, "main.go"), code);
      const tidy = spawnSync("go", ["mod", "tidy"], {
        cwd: dir,
        env: GO_ENV,
        encoding: "utf8",
        timeout: 120_000,
      });
      if (tidy.status !== 0) throw new Error(`go mod tidy failed in ${dir}:\n${tidy.stderr}`);
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
