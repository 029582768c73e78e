import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rootEntry } from "../../../test/support/fixtures.js";
import {
  fileOf,
  keyOf,
  removeDir,
  tempDir,
  withEngine,
} from "../../../test/support/jsonl/fixtures.js";
import { checkFrame, decodePayload } from "./record.js";

/**
 * Two OS processes appending to one session: the cross-process lock plus
 * the fencing check must keep seqs dense and every acknowledged entry
 * exactly once. The negative control runs the same scenario without the
 * lock and must show violations, or the test proves nothing.
 */

const WORKER = fileURLToPath(
  new URL("../../../test/support/jsonl/append-worker.ts", import.meta.url),
);
const k = keyOf("shared");
const PER_PROCESS = 1500;

interface WorkerOutput {
  acked: string[];
  errors: number;
}

function runWorker(
  dataDir: string,
  tag: string,
  noLock: boolean,
  ready: () => void,
  go: Promise<void>,
): Promise<WorkerOutput> {
  const args = {
    dataDir,
    sessionId: k.sessionId,
    count: PER_PROCESS,
    tag,
    streams: 4,
    noLock,
  };
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify(args)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let readySeen = false;
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (!readySeen && out.startsWith("ready\n")) {
      readySeen = true;
      ready();
      void go.then(() => child.stdin.write("go\n"));
    }
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`worker ${tag} exited ${code}: ${err}`));
      const lines = out.split("\n").filter((l) => l !== "");
      resolve({
        acked: lines.filter((l) => l.startsWith("ack ")).map((l) => l.split(" ")[1] as string),
        errors: lines.filter((l) => l.startsWith("err ")).length,
      });
    });
  });
}

interface Audit {
  lines: number;
  corruptLines: number;
  misplacedSeqs: number;
  /** Records whose parent is not an earlier record of the file. */
  orphans: number;
  duplicateIds: number;
  lostAcked: number;
  acked: number;
  errors: number;
  /** Times the writer changed from one line to the next (both processes took turns). */
  handovers: number;
}

/** Reads the file line by line, independently of the engine's reader. */
async function audit(file: string, outputs: WorkerOutput[]): Promise<Audit> {
  const buf = await readFile(file);
  const ids = new Map<string, number>();
  let lines = 0;
  let corruptLines = 0;
  let misplacedSeqs = 0;
  let orphans = 0;
  let handovers = 0;
  let lastWriter = "";
  for (let pos = 0; pos < buf.length; ) {
    let nl = buf.indexOf(0x0a, pos);
    if (nl < 0) nl = buf.length;
    lines++;
    const frame = checkFrame(buf, pos, nl);
    const entry = typeof frame === "string" ? frame : decodePayload(buf, frame);
    if (typeof entry === "string") {
      corruptLines++;
    } else {
      if (Number(entry.seq) !== lines) misplacedSeqs++;
      if (entry.parentId !== undefined && !ids.has(entry.parentId)) orphans++;
      ids.set(entry.id, (ids.get(entry.id) ?? 0) + 1);
      const writer = entry.id.split("-")[0] as string;
      if (lastWriter !== "" && writer !== lastWriter && lines > 2) handovers++;
      lastWriter = writer;
    }
    pos = nl + 1;
  }
  const acked = outputs.flatMap((o) => o.acked);
  return {
    lines,
    corruptLines,
    misplacedSeqs,
    orphans,
    duplicateIds: [...ids.values()].filter((n) => n > 1).length,
    lostAcked: acked.filter((id) => !ids.has(id)).length,
    acked: acked.length,
    errors: outputs.reduce((n, o) => n + o.errors, 0),
    handovers,
  };
}

async function scenario(dataDir: string, noLock: boolean): Promise<Audit> {
  await withEngine(dataDir, (e) => e.create(k, [rootEntry(k.sessionId)]));
  // Both workers start appending at once, when both are ready (see append-worker.ts).
  let readyCount = 0;
  let start = (): void => {};
  const go = new Promise<void>((resolve) => {
    start = resolve;
  });
  const ready = (): void => {
    if (++readyCount === 2) start();
  };
  const outputs = await Promise.all([
    runWorker(dataDir, "a", noLock, ready, go),
    runWorker(dataDir, "b", noLock, ready, go),
  ]);
  return audit(fileOf(dataDir, k), outputs);
}

describe("two processes appending to one session", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(() => removeDir(dataDir));

  it("keeps seqs dense and every acknowledged entry exactly once", async () => {
    const a = await scenario(dataDir, false);
    console.log(`two processes with the lock: ${JSON.stringify(a)}`);
    expect(a.handovers, "the processes took turns (fencing read the other's tail)").toBeGreaterThan(
      2,
    );
    expect({ ...a, handovers: 0 }).toEqual({
      lines: 1 + 2 * PER_PROCESS,
      corruptLines: 0,
      misplacedSeqs: 0,
      orphans: 0,
      duplicateIds: 0,
      lostAcked: 0,
      acked: 2 * PER_PROCESS,
      errors: 0,
      handovers: 0,
    });
    await withEngine(dataDir, async (e) => {
      expect((await e.load(k)).headSeq).toBe(1 + 2 * PER_PROCESS);
    });
  }, 120_000);

  it("without the cross-process lock (negative control) shows violations", async () => {
    const attempts: Audit[] = [];
    for (let i = 0; i < 3; i++) {
      const dir = path.join(dataDir, `attempt-${i}`);
      const a = await scenario(dir, true);
      attempts.push(a);
      const violations =
        a.corruptLines + a.misplacedSeqs + a.orphans + a.duplicateIds + a.lostAcked;
      console.log(
        `two processes WITHOUT the lock, attempt ${i + 1}: ${JSON.stringify(a)}, violations ${violations}`,
      );
      if (violations > 0) return;
    }
    expect.fail(`no violation in 3 attempts: ${JSON.stringify(attempts)}`);
  }, 300_000);
});
