/**
 * The browser tests' harness: Debian's Chromium driven by playwright-core,
 * an in-process sessiond (JSONL store, the viewer built fresh by
 * scripts/build-ui.mjs into a temp dir) that can be stopped and started
 * again on the same port and data dir, and screenshots for docs/.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { openStore } from "../../src/index.js";
import {
  type RunningServer,
  serverConfig,
  startServer,
  type TlsConfig,
  type TokenGrant,
} from "../../src/server/index.js";
import { BIN, REPO } from "../harness/server.js";

/** The Chromium binaries tried in order (Debian: chromium-headless-shell, chromium). */
const CANDIDATES = ["/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"];

/** The browser this machine has, or undefined (the tests then skip, loudly). */
export const CHROMIUM = CANDIDATES.find((p) => existsSync(p));

/**
 * Without Chromium the browser tests skip with a loud message, except in CI
 * (.ci/run installs it): there a missing browser fails the run.
 */
export function noChromium(name: string): void {
  const why =
    `no Chromium at ${CANDIDATES.join(" or ")}. ` +
    "Install it: apt-get install -y --no-install-recommends chromium-headless-shell";
  if (process.env.CI === "true") {
    describe(name, () => {
      it("needs Chromium in CI", () => {
        throw new Error(`.ci/run installs Chromium, yet ${why}`);
      });
    });
    return;
  }
  console.warn(`\n*** SKIPPED: ${name}: ${why} ***\n`);
  describe(name, () => {
    it.skip("needs Chromium (see the warning above)", () => {});
  });
}

/** Headless Chromium (root needs --no-sandbox). */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM as string, args: ["--no-sandbox"] });
}

let built: Promise<string> | undefined;

/** The viewer, built once per test process into a temp dir. */
export function builtUi(): Promise<string> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-ui-"));
    const { buildUi } = (await import("../../scripts/build-ui.mjs")) as {
      buildUi(dir: string): Promise<string[]>;
    };
    await buildUi(dir);
    return dir;
  })();
  return built;
}

/** An in-process server over a JSONL data dir that a test can restart. */
export class ViewerServer {
  private running: RunningServer | undefined;
  port = 0;

  constructor(
    readonly dataDir: string,
    private readonly tokens: readonly TokenGrant[] = [],
    private readonly tls?: TlsConfig,
  ) {}

  get url(): string {
    return `${this.tls ? "https" : "http"}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const store = openStore({ dataDir: this.dataDir });
    this.running = await startServer(
      store,
      serverConfig({
        port: this.port,
        tokens: this.tokens,
        tls: this.tls,
        uiDir: await builtUi(),
        heartbeatMs: 1000,
        shutdownGraceMs: 200,
        log: () => {},
      }),
    );
    this.port = this.running.port;
  }

  async stop(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }
}

/** A fresh data dir. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), "sessiond-viewer-"));
}

/**
 * The usual fixture of a describe block: a fresh data dir filled by `seed`,
 * a viewer server on it and Chromium, made before the block's tests (then
 * handed to `ready`, which opens the pages it needs) and closed after them.
 */
export function viewerFixture(
  seed: (dataDir: string) => Promise<void>,
  ready: (f: { server: ViewerServer; browser: Browser }) => Promise<void> | void,
): void {
  let browser: Browser | undefined;
  let server: ViewerServer | undefined;
  beforeAll(async () => {
    const dataDir = tempDataDir();
    await seed(dataDir);
    server = new ViewerServer(dataDir);
    await server.start();
    browser = await launch();
    await ready({ server, browser });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
}

/**
 * Where the tests put their screenshots: a temp dir, or the folder named by
 * SESSIOND_SCREENSHOTS_DIR (`SESSIOND_SCREENSHOTS_DIR=docs/screenshots npx
 * vitest run test/browser` refreshes the committed ones the README shows), so
 * that a test run leaves the checkout as it was.
 */
export function screenshotPath(name: string): string {
  const given = process.env.SESSIOND_SCREENSHOTS_DIR;
  screenshotDir ??= given
    ? resolve(REPO, given)
    : mkdtempSync(join(tmpdir(), "sessiond-screenshots-"));
  mkdirSync(screenshotDir, { recursive: true });
  return join(screenshotDir, name);
}

let screenshotDir: string | undefined;

/**
 * A `sessiond` command (`append`, `new`, ...) as a separate process, the
 * way an agent next to the viewer writes: resolves when the command has
 * exited (its call is acknowledged, so durable).
 */
export function sessiondCommand(
  url: string,
  args: string[],
  token?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [BIN, ...args, "--server", url], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, SESSIOND_URL: "", SESSIOND_TOKEN: token ?? "", NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    proc.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    proc.on("error", fail);
    proc.on("close", (code) => done({ code, stdout, stderr }));
  });
}
