/**
 * The Java client (clients/java): `mvn -q -B verify` compiles it with javac
 * -Xlint:all -Werror and runs its JUnit 5 tests against servers started
 * here: the server under test, which LiveTest.watchResumesAcrossARestart has
 * restarted through the handshake of conformance/README.md ("Restarts":
 * restart-<n>.request, then restart-<n>.done once it is back on the same
 * port and data dir), and a second one with TLS and a bearer token. The
 * surefire reports must name every test, none failed and none skipped. Then
 * a user's side: `mvn install` puts the artifact into ~/.m2, and a fresh
 * Maven project that depends on io.github.sessiond:sessiond-client:0.1.0
 * (the dependency block of clients/java/README.md) compiles and runs the
 * README's example (clients/java/example/Example.java) against the server.
 *
 * Without mvn or java (17+) the test is skipped loudly, except under CI=true
 * (a failure there). The first run downloads the dependencies from Maven
 * Central into ~/.m2; after that the file takes about a minute.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveRestarts, startTlsTokenServer } from "../harness/client-servers.js";
import { REPO, removeDataDir, serverUnderTest } from "../harness/server.js";

const run = promisify(execFile);

const JAVA_CLIENT_DIR = join(REPO, "clients/java");
const REPORTS = join(JAVA_CLIENT_DIR, "target/surefire-reports");
const PKG = "io.github.sessiond.client";

/** Every test of clients/java/src/test/java, by class: all must run and pass. */
const TESTS: Record<string, string[]> = {
  IdsTest: [
    "entryIdsAre16HexAndRandom",
    "sessionIdsAreUtcTimestampAndHex",
    "fillSetsOnlyWhatIsUnset",
    "fillOfAnImportKeepsTheRecordedSessionIdAndFillsEntries",
  ],
  MessagesTest: [
    "buildersMakeTypedMessages",
    "textOfJoinsTextPartsOnly",
    "toValueTakesJsonLikeValues",
  ],
  RetryPolicyTest: [
    "backoffDoublesUpToTheCapWithJitter",
    "onlyUnavailableAndCancelledAreRetryable",
    "aRefusedConnectionProvesNothingWasSent",
  ],
  RetryTest: [
    "unavailableIsRetriedWithTheSameIds",
    "theFutureStubIsRetriedToo",
    "abortedAndOtherCodesAreNotRetried",
    "retryGivesUpAfterMaxAttempts",
    "aCancelledTheCallerDidNotAskForIsRetried",
    "retriesNeverWaitPastTheDeadline",
    "retriedDeleteAfterAnUnknownOutcomeSucceedsOnNotFound",
    "deleteNotFoundStaysNotFoundUnlessAnAttemptMayHaveDeleted",
    "idsAreFilledForEveryRequestThatHasThem",
    "theCallTimeoutBindsUnaryCallsOnlyAndTheTokenGoesEverywhere",
    "sessiondExceptionFromUnwrapsFutures",
    "aTakenDrawnSessionIdIsDrawnAgainEightTimesAtMost",
    "createdFalseIsAnotherSessionUnlessAnAttemptUnderTheIdMayHaveReachedTheServer",
    "forkAndImportAreDrawnAgainTooAlsoWithRetriesOff",
    "aSessionIdTheCallerGaveIsNeverDrawnAgain",
  ],
  BlobsTest: [
    "partsOverTheThresholdBecomeReferencesAndComeBackTheSame",
    "theCacheDropsTheLeastRecentlyUsed",
    "answersAreResolvedThroughEveryStubAndTheWatchAndCached",
    "contentThatDoesNotMatchItsReferenceIsDataLoss",
    "largePartsAreUploadedInChunksFromWhereTheServerSays",
    "largePartsGoUpFirstOnlyWhileTheRequestCannotCarryThem",
    "theBudgetIsHalfTheCallsMaxOutboundMessageSize",
    "anUploadAnotherClientMovesOnGoesOnFromWhatTheServerHolds",
    "aFailedUploadFailsTheCallUnsent",
  ],
  EntryWatchTest: [
    "resumesAfterEveryBrokenStreamFromTheLastSeqSkippingReplays",
    "notFoundEndsTheWatch",
    "closeEndsABlockedHasNextAndTheStream",
    "pollReturnsNullWhenNothingCame",
    "closingTheClientClosesItsWatches",
  ],
  LiveTest: [
    "storeServiceEveryRpc",
    "sessionServiceEveryRpc",
    "appendRetriedAfterALostReplyIsNotDuplicated",
    "casConflictIsAbortedAndNotRetried",
    "notFoundCodes",
    "deleteRetriedAfterALostReplySucceeds",
    "watchEndsWithNotFoundWhenTheSessionIsDeleted",
    "watchCloseEndsHasNext",
    "readStateAndReadTreeMergePages",
    "blobsComeBackByteForByte",
    "blobRefsAndGetBlobRanges",
    "largePartsGoUpFirstOnlyWhenTheRequestCannotCarryThem",
    "unknownBlobRefIsFailedPrecondition",
    "callTimeoutBindsUnaryCallsOnly",
    "keepaliveFindsADeadConnection",
    "watchResumesAcrossARestart",
    "tlsAndToken",
    "createDrawsAgainWhenItsDrawnSessionIdIsTaken",
    "forkDrawsAgainWhenItsDrawnSessionIdIsTaken",
    "importDrawsAgainWhenItsDrawnSessionIdIsTaken",
    "aCreateWhoseReplyWasLostIsNotDrawnAgain",
    "aSessionIdTheCallerGaveIsNotDrawnAgain",
    "takenSessionIdsAreDrawnEightTimesAtMost",
  ],
};
const RESTART_TEST = "LiveTest.watchResumesAcrossARestart";
const EXPECTED = Object.entries(TESTS).flatMap(([cls, names]) => names.map((n) => `${cls}.${n}`));

/** Why Maven or Java is unusable here, or undefined when both are fine. */
function missingJavaTools(): string | undefined {
  const mvn = spawnSync("mvn", ["-v"], { timeout: 30_000, encoding: "utf8" });
  if (mvn.status !== 0) return "mvn not found (Maven 3.8+ with Maven Central is needed)";
  const java = spawnSync("java", ["-version"], { timeout: 30_000, encoding: "utf8" });
  if (java.status !== 0) return "java not found (Java 17+ is needed)";
  const m = /version "(\d+)/.exec(java.stderr);
  if (m === null || Number(m[1]) < 17)
    return `java is too old for clients/java (17+): ${java.stderr}`;
  return undefined;
}

const missing = missingJavaTools();
const inCi = process.env.CI === "true";
if (missing !== undefined && !inCi) {
  console.warn(`\n*** SKIPPING the Java client tests: ${missing} ***\n`);
}

/** Runs a command, failing with its output. */
async function sh(cmd: string, args: string[], cwd: string, timeout: number): Promise<string> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, timeout, maxBuffer: 64 << 20 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

interface TestCase {
  id: string;
  outcome: "passed" | "failed" | "skipped";
}

/** The test cases of the surefire XML reports. */
function surefireResults(): TestCase[] {
  const cases: TestCase[] = [];
  for (const f of readdirSync(REPORTS).filter((n) => /^TEST-.*\.xml$/.test(n))) {
    const xml = readFileSync(join(REPORTS, f), "utf8");
    const re = /<testcase name="([^"]+)" classname="([^"]+)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g;
    for (const m of xml.matchAll(re)) {
      const body = m[4] ?? "";
      const cls = (m[2] as string).replace(`${PKG}.`, "");
      cases.push({
        id: `${cls}.${m[1]}`,
        outcome: /<(failure|error)\b/.test(body)
          ? "failed"
          : /<skipped\b/.test(body)
            ? "skipped"
            : "passed",
      });
    }
  }
  return cases;
}

describe("Java client (clients/java)", () => {
  if (missing !== undefined && !inCi) {
    it.skip(`SKIPPED, Maven or Java missing: ${missing}`, () => {});
    return;
  }

  const dirs: string[] = [];
  beforeAll(() => {
    if (missing !== undefined) throw new Error(`CI=true but ${missing}`);
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("the pom pins the versions README names and compiles with -Xlint:all -Werror", () => {
    const pom = readFileSync(join(JAVA_CLIENT_DIR, "pom.xml"), "utf8");
    expect(pom).toContain("<groupId>io.github.sessiond</groupId>");
    expect(pom).toContain("<artifactId>sessiond-client</artifactId>");
    expect(pom).toContain("<version>0.1.0</version>");
    expect(pom).toContain("<maven.compiler.release>17</maven.compiler.release>");
    expect(pom).toContain("<grpc.version>1.85.1</grpc.version>");
    expect(pom).toContain("<protobuf.version>4.36.2</protobuf.version>");
    expect(pom).toMatch(/<arg>-Xlint:all<\/arg>\s*<arg>-Werror<\/arg>/);
    // No lint category is switched off (-Xlint:-name) for any source.
    expect(pom).not.toMatch(/-Xlint:-/);
  });

  it("mvn verify passes against a live server, restarted mid-watch, and a TLS one", {
    timeout: 180_000,
  }, async () => {
    const server = await serverUnderTest();
    const handshake = mkdtempSync(join(tmpdir(), "sessiond-java-restart-"));
    dirs.push(handshake);
    // A second server with TLS and a bearer token, for LiveTest.tlsAndToken.
    const token = "java-client-test-token-0123456789";
    const { server: secure, ca } = await startTlsTokenServer(handshake, token);
    const restarts = server.local ? serveRestarts(handshake, server.local) : undefined;
    try {
      rmSync(REPORTS, { recursive: true, force: true });
      const env = {
        ...process.env,
        SESSIOND_ADDR: new URL(server.url).host,
        ...(server.external ? {} : { SESSIOND_RESTART_DIR: handshake }),
        SESSIOND_TLS_ADDR: new URL(secure.url).host,
        SESSIOND_TLS_CA: ca,
        SESSIOND_TLS_TOKEN: token,
      };
      const started = Date.now();
      const child = spawn("mvn", ["-q", "-B", "verify"], { cwd: JAVA_CLIENT_DIR, env });
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      const timer = setTimeout(() => child.kill("SIGKILL"), 170_000);
      const code = await exited;
      clearTimeout(timer);
      await restarts?.stop();
      console.log(`mvn -q -B verify took ${((Date.now() - started) / 1000).toFixed(1)} s`);
      if (code !== 0) throw new Error(`mvn verify exited with ${code}:\n${out}`);

      const cases = surefireResults();
      const ids = (o: TestCase["outcome"]) =>
        cases
          .filter((c) => c.outcome === o)
          .map((c) => c.id)
          .sort();
      expect(ids("failed")).toEqual([]);
      expect(cases.map((c) => c.id).sort()).toEqual([...EXPECTED].sort());
      if (server.external) {
        console.warn(`\n*** ${RESTART_TEST} SKIPPED: the server is external (SESSIOND_URL) ***\n`);
        expect(ids("skipped")).toEqual([RESTART_TEST]);
      } else {
        expect(ids("skipped")).toEqual([]);
        expect(restarts?.pids).toHaveLength(2);
        expect(restarts?.pids[0]).not.toBe(restarts?.pids[1]);
        // The watch broke with the restart and resumed after the third entry.
        expect(out).toMatch(/resumed after \[UNAVAILABLE@3(, \w+@3)*\]/);
      }
      expect(out).not.toMatch(/SESSIOND_ADDR is not set/);
    } finally {
      await secure.stop();
      await removeDataDir(secure.dataDir);
      await restarts?.stop();
      await restarts?.current().stop();
      await server.close(); // the data dir too (a restart keeps it)
    }
  });

  it("the README's example runs in a fresh Maven project on the installed artifact", {
    timeout: 150_000,
  }, async () => {
    const example = readFileSync(join(JAVA_CLIENT_DIR, "example/Example.java"), "utf8");
    const readme = readFileSync(join(JAVA_CLIENT_DIR, "README.md"), "utf8");
    expect(readme, "clients/java/README.md shows example/Example.java as it is").toContain(
      `\`\`\`java\n${example}\`\`\`\n`,
    );
    const dependency = /```xml\n(<dependency>[\s\S]*?<\/dependency>)\n```/.exec(readme)?.[1];
    expect(dependency, "README's dependency block").toMatch(
      /<groupId>io\.github\.sessiond<\/groupId>\s*<artifactId>sessiond-client<\/artifactId>\s*<version>0\.1\.0<\/version>/,
    );

    await sh("mvn", ["-q", "-B", "install", "-DskipTests"], JAVA_CLIENT_DIR, 120_000);
    const installed = join(
      process.env.HOME ?? "",
      ".m2/repository/io/github/sessiond/sessiond-client/0.1.0/sessiond-client-0.1.0.jar",
    );
    expect(existsSync(installed), installed).toBe(true);

    // A user's project: nothing of the checkout but the installed artifact.
    const dir = mkdtempSync(join(tmpdir(), "sessiond-java-user-"));
    dirs.push(dir);
    mkdirSync(join(dir, "src/main/java"), { recursive: true });
    writeFileSync(join(dir, "src/main/java/Example.java"), example);
    writeFileSync(
      join(dir, "pom.xml"),
      `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>sessiond-user</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    ${dependency}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.14.0</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.9.0</version>
      </plugin>
    </plugins>
  </build>
</project>
`,
    );
    await sh(
      "mvn",
      ["-q", "-B", "compile", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"],
      dir,
      120_000,
    );
    const classpath = `${join(dir, "target/classes")}:${readFileSync(join(dir, "cp.txt"), "utf8").trim()}`;
    expect(classpath).toContain("sessiond-client-0.1.0.jar");
    expect(classpath).not.toContain(JAVA_CLIENT_DIR);

    const server = await serverUnderTest();
    try {
      const out = await sh(
        "java",
        ["-cp", classpath, "Example", new URL(server.url).host],
        dir,
        60_000,
      );
      const lines = out.trim().split("\n");
      expect(lines[0]).toBe("ROLE_USER: What is 2+2?");
      expect(lines[1]).toBe("ROLE_ASSISTANT: 4");
      expect(lines[2]).toMatch(
        /^forked (\d{8}-\d{6}-[0-9a-f]{8}) -> (?!\1)\d{8}-\d{6}-[0-9a-f]{8}$/,
      );
      expect(lines[3]).toMatch(/^seq 1: \S+ $/);
      expect(lines[4]).toMatch(/^seq 2: [0-9a-f]{16} What is 2\+2\?$/);
      expect(lines[5]).toMatch(/^seq 3: [0-9a-f]{16} 4$/);
      expect(lines[6]).toMatch(/^NOT_FOUND: session "gone-\d{8}-\d{6}-[0-9a-f]{8}" not found/);
      expect(lines).toHaveLength(7);
    } finally {
      await server.close();
    }
  });
});
