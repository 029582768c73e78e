/**
 * The Go client (clients/go): `go vet` and `gofmt -l` clean, its tests
 * (`go test -v ./sessiond/`) pass against a real server, and the example
 * runs. TestLiveWatchResumesAcrossRestart asks for a server restart through
 * the restart handshake of conformance/README.md (SESSIOND_RESTART_DIR,
 * test/harness/client-servers.ts) once its watch is established.
 *
 * Built in module mode with the machine's Go 1.26 and the versions go.sum
 * pins (see test/harness/go.ts). Without Go the test is skipped loudly,
 * except under CI=true (a failure there).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveRestarts, startTlsTokenServer } from "../harness/client-servers.js";
import { GO_CLIENT_DIR, GO_CLIENT_IMPORT, GO_ENV, missingGoTools } from "../harness/go.js";
import { removeDataDir, serverUnderTest } from "../harness/server.js";

const run = promisify(execFile);

const missing = missingGoTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Go client tests: ${missing} ***\n`);
}

/** Every test of clients/go/sessiond: all must run and pass. */
const UNIT_TESTS = [
  "TestBlobCacheDropsTheLeastRecentlyUsed",
  "TestBlobPartsGoOverThresholdAndComeBackTheSame",
  "TestShallowCopySharesAndLeavesTheOriginalAlone",
  "TestUploadsOnlyWhatTheRequestCannotCarry",
  "TestAnUploadMovedOnByAnotherClientGoesOnFromWhatTheServerHolds",
  "TestNewEntryIDIs16HexAndRandom",
  "TestNewSessionIDIsUTCTimestampAndHex",
  "TestFillIDsSetsOnlyWhatIsUnset",
  "TestFillIDsOfAnImportKeepsTheRecordedSessionIDAndFillsEntries",
  "TestIDsDrawAgainASessionIDThatIsTaken",
  "TestIDsKeepTheSessionOfAnAttemptWithUnknownOutcome",
  "TestIDsNeverDrawAgainASessionIDTheyDidNotDraw",
  "TestIDsDrawAtMostEightSessionIDs",
  "TestIDsOfAnImportIgnoreTheRetriesOfCallsMadeWithinIt",
  "TestIDsKeepTheRefusalOfAForkWhoseLostAttemptForkedAnotherLeaf",
  "TestBuildersMakeTypedMessages",
  "TestTextOfJoinsTextPartsOnly",
  "TestRetryRepeatsUnavailableThenSucceeds",
  "TestRetryLeavesAbortedAndOtherCodesAlone",
  "TestRetryGivesUpAfterMaxAttempts",
  "TestRetryRepeatsCanceledOnlyWhenTheCallerDidNot",
  "TestRetriedDeleteAfterUnknownOutcomeSucceedsOnNotFound",
  "TestDeleteNotFoundStaysNotFoundUnlessAnAttemptMayHaveDeleted",
  "TestBackoffGrowsWithJitterUpToTheCap",
  "TestRetryStopsWaitingWhenTheContextEnds",
  "TestTraceContextSendsTheSpanAsTraceparent",
  "TestTraceContextSendsNothingWithoutAPropagator",
  "TestTraceContextKeepsTheCallersTraceparent",
];
const LIVE_TESTS = [
  "TestLiveBlobsComeBackByteForByte",
  "TestLiveBlobRefsAndGetBlobRanges",
  "TestLiveUploadsOnlyWhatTheRequestCannotCarry",
  "TestLiveUnknownBlobRefIsFailedPrecondition",
  "TestLiveStoreServiceEveryRPC",
  "TestLiveSessionServiceEveryRPC",
  "TestLiveAppendRetriedAfterLostReplyIsNotDuplicated",
  "TestLiveCASConflictIsAbortedAndNotRetried",
  "TestLiveNotFoundCodes",
  "TestLiveDeleteRetriedAfterLostReplySucceeds",
  "TestLiveKeepaliveFindsADeadConnection",
  "TestLiveWatchEndsWithNotFoundWhenTheSessionIsDeleted",
  "TestLiveWatchCloseEndsNext",
  "TestLiveReadStateAndReadTreeMergePages",
  "TestLiveCallTimeoutBindsUnaryCallsOnly",
  "TestLiveTLSAndToken",
  "TestLiveTakenSessionIDIsDrawnAgain",
  "TestLiveCreateRetriedAfterLostReplyIsNotDrawnAgain",
  "TestLiveCallersTakenSessionIDIsNotDrawnAgain",
  "TestLiveSessionIDDrawsStopAfterEight",
];
const RESTART_TEST = "TestLiveWatchResumesAcrossRestart";

function results(out: string, verdict: "PASS" | "FAIL" | "SKIP"): string[] {
  return [...out.matchAll(new RegExp(`^--- ${verdict}: (\\S+)`, "gm"))].map((m) => m[1] as string);
}

/** Runs a go command in clients/go. */
async function go(args: string[], timeout = 60_000): Promise<string> {
  try {
    const { stdout, stderr } = await run("go", args, { cwd: GO_CLIENT_DIR, env: GO_ENV, timeout });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `go ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

describe("Go client (clients/go)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Go toolchain missing: ${missing}`, () => {});
    return;
  }

  const dirs: string[] = [];
  beforeAll(() => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("go vet and gofmt -l are clean, go.mod and go.sum are tidy", {
    timeout: 120_000,
  }, async () => {
    await go(["vet", "./..."], 120_000);
    // The conformance runner's own rules (placeholders, expect matching); the
    // runner itself runs in test/conformance/clients.test.ts.
    expect(await go(["test", "-count=1", "./conformance/"], 120_000)).toMatch(/^ok\s/m);
    const { stdout } = await run("gofmt", ["-l", "."], { cwd: GO_CLIENT_DIR, env: GO_ENV });
    expect(stdout.trim()).toBe("");
    // go mod tidy -diff prints what tidy would change and fails when anything would.
    await go(["mod", "tidy", "-diff"], 120_000);
    const mod = await run("go", ["mod", "edit", "-json"], { cwd: GO_CLIENT_DIR, env: GO_ENV });
    const parsed = JSON.parse(mod.stdout) as {
      Module: { Path: string };
      Require: Array<{ Path: string; Version: string; Indirect?: boolean }>;
    };
    expect(parsed.Module.Path).toBe(GO_CLIENT_IMPORT);
    const direct = Object.fromEntries(
      parsed.Require.filter((r) => !r.Indirect).map((r) => [r.Path, r.Version]),
    );
    // The versions README, Clients names as tested.
    expect(direct).toMatchObject({
      "google.golang.org/grpc": "v1.85.0",
      "google.golang.org/protobuf": "v1.36.12",
      "go.opentelemetry.io/otel": "v1.47.0",
    });
  });

  it("go test -v passes against a live server, restarted mid-watch", {
    timeout: 90_000,
  }, async () => {
    const server = await serverUnderTest();
    const handshake = mkdtempSync(join(tmpdir(), "sessiond-go-restart-"));
    dirs.push(handshake);
    // A second server with TLS and a bearer token, for TestLiveTLSAndToken.
    const token = "go-client-test-token-0123456789";
    const { server: secure, ca } = await startTlsTokenServer(handshake, token);
    const restarts = server.local ? serveRestarts(handshake, server.local) : undefined;
    try {
      const env = {
        ...GO_ENV,
        SESSIOND_ADDR: new URL(server.url).host,
        ...(server.external ? {} : { SESSIOND_RESTART_DIR: handshake }),
        SESSIOND_TLS_ADDR: new URL(secure.url).host,
        SESSIOND_TLS_CA: ca,
        SESSIOND_TLS_TOKEN: token,
      };
      const child = spawn("go", ["test", "-count=1", "-v", "./sessiond/"], {
        cwd: GO_CLIENT_DIR,
        env,
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      const timer = setTimeout(() => child.kill("SIGKILL"), 80_000);
      const code = await exited;
      clearTimeout(timer);
      await restarts?.stop();
      if (code !== 0) throw new Error(`go test exited with ${code}:\n${out}`);

      const passed = results(out, "PASS");
      const expected = [...UNIT_TESTS, ...LIVE_TESTS, ...(server.external ? [] : [RESTART_TEST])];
      expect(results(out, "FAIL")).toEqual([]);
      expect(passed.sort()).toEqual(expected.sort());
      if (server.external) {
        console.warn(`\n*** ${RESTART_TEST} SKIPPED: the server is external (SESSIOND_URL) ***\n`);
        expect(results(out, "SKIP")).toEqual([RESTART_TEST]);
      } else {
        expect(results(out, "SKIP")).toEqual([]);
        expect(restarts?.pids).toHaveLength(2);
        expect(restarts?.pids[0]).not.toBe(restarts?.pids[1]);
        // The watch broke with the restart and resumed after the third entry.
        expect(out).toMatch(/resumed after \[(\w+@3 ?)+\]/);
      }
      expect(out).toMatch(/^ok\s+github\.com\/sessiond\/sessiond\/clients\/go\/sessiond/m);
    } finally {
      await secure.stop();
      await removeDataDir(secure.dataDir);
      await restarts?.stop();
      await restarts?.current().stop();
      await server.close(); // the data dir too (a restart keeps it)
    }
  });

  it("the example creates, appends, reads, forks and watches", { timeout: 60_000 }, async () => {
    const example = readFileSync(join(GO_CLIENT_DIR, "example/main.go"), "utf8");
    const readme = readFileSync(join(GO_CLIENT_DIR, "README.md"), "utf8");
    expect(readme, "clients/go/README.md shows example/main.go as it is").toContain(
      `\`\`\`go\n${example}\`\`\`\n`,
    );
    const server = await serverUnderTest();
    try {
      const out = await go(["run", "./example", new URL(server.url).host]);
      const lines = out.trim().split("\n");
      expect(lines[0]).toBe("ROLE_USER: What is 2+2?");
      expect(lines[1]).toBe("ROLE_ASSISTANT: 4");
      expect(lines[2]).toMatch(
        /^forked (\d{8}-\d{6}-[0-9a-f]{8}) -> (?!\1)\d{8}-\d{6}-[0-9a-f]{8}$/,
      );
      expect(lines[3]).toMatch(/^seq 1: \S+ $/);
      expect(lines[4]).toMatch(/^seq 2: [0-9a-f]{16} What is 2\+2\?$/);
      expect(lines[5]).toMatch(/^seq 3: [0-9a-f]{16} 4$/);
      expect(lines).toHaveLength(6);
    } finally {
      await server.close();
    }
  });
});
