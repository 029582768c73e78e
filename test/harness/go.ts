/**
 * The Go toolchain the Go client's tests need: Debian's golang-go (Go 1.19)
 * and the grpc-go / protobuf-go sources (golang-google-grpc-dev,
 * golang-google-protobuf-dev) in /usr/share/gocode. There is no network for
 * Go modules, so the client is built in GOPATH mode: a temp GOPATH whose
 * src/github.com/sessiond/sessiond/clients/go is a symlink to clients/go,
 * followed by /usr/share/gocode. Without the tools a test skips loudly,
 * except under CI=true (CI installs them, so a missing one is a failure).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./server.js";

export const GO_INSTALL =
  "apt-get install -y --no-install-recommends golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-opentelemetry-otel-dev";
export const GOCODE = "/usr/share/gocode";
/** The Go module of the client, and its import path. */
export const GO_CLIENT_DIR = join(REPO, "clients/go");
export const GO_CLIENT_IMPORT = "github.com/sessiond/sessiond/clients/go";

/** Why the Go toolchain is unusable here, or undefined when it is fine. */
export function missingGoTools(): string | undefined {
  const go = spawnSync("go", ["version"], { timeout: 15_000, encoding: "utf8" });
  if (go.status !== 0) return `go not found (${GO_INSTALL})`;
  for (const pkg of [
    "google.golang.org/grpc",
    "google.golang.org/protobuf",
    "go.opentelemetry.io/otel",
  ]) {
    if (!existsSync(join(GOCODE, "src", pkg)))
      return `${GOCODE}/src/${pkg} missing (${GO_INSTALL})`;
  }
  return undefined;
}

/** A GOPATH that holds the client (by symlink) and the environment to build it offline. */
export interface GoWorkspace {
  /** The client's directory inside the GOPATH: run go commands here. */
  dir: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

export function goWorkspace(): GoWorkspace {
  const gopath = mkdtempSync(join(tmpdir(), "sessiond-gopath-"));
  const parent = join(gopath, "src", GO_CLIENT_IMPORT, "..");
  mkdirSync(parent, { recursive: true });
  const dir = join(gopath, "src", GO_CLIENT_IMPORT);
  symlinkSync(GO_CLIENT_DIR, dir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GO111MODULE: "off",
    GOPATH: `${gopath}:${GOCODE}`,
    // Kept between runs (.cache/ is git-ignored): a cold build of grpc-go
    // takes ~15 s, a warm one ~1 s.
    GOCACHE: join(REPO, ".cache/go-build"),
    GOFLAGS: "",
    GOPROXY: "off",
    CGO_ENABLED: "0",
    // The go command wants a PWD that names the symlinked path, or it
    // resolves the package outside the GOPATH.
    PWD: dir,
  };
  return { dir, env, remove: () => rmSync(gopath, { recursive: true, force: true }) };
}
