/**
 * T13 kill -9 during a redaction (the one sanctioned rewrite of a JSONL
 * log: copy with the chosen records replaced, fsync, rename over the log,
 * directory fsync, under the session's lock).
 *
 * Each round makes a session (writes of 1–4 entries, so that records carry
 * the `more` marker; some entries hold a secret), then a child process
 * (workers/w-redact.ts) redacts 1–3 of its entries with its own engine and
 * kills itself with SIGKILL at one step of the rewrite, each step in turn:
 * half of the first write, before / after the copy's fsync, before / after
 * the rename, before / after the directory's fsync, or not at all. With
 * the child dead the session is audited:
 *
 * - the log reads fully with a fresh engine (no DATA_LOSS), and line by
 *   line (lib/jsonl-check.ts: frame, CRC, seq = line, parents earlier, no
 *   torn or unterminated bytes);
 * - every entry keeps its id, parent and seq, every entry not chosen is
 *   byte for byte as before;
 * - the chosen entries are either ALL as before or ALL redacted (never a
 *   mix), and once redacted no byte of the secret is left in the file;
 * - a redaction run again afterwards (a fresh engine) completes, and then
 *   no file of the session's directory holds the secret.
 *
 * Negative control `redactInPlace` (src/cli/debug-switches.ts): the
 * rewrite overwrites the log in place, without copy and rename; the
 * "write-half" kill then leaves a mix of old and new bytes, which the
 * audit must find.
 */

import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { EntrySchema, WithheldReason } from "../../gen/sessiond/v1/entry_pb.js";
import { planWithhold, withheldMarker } from "../../src/core/withheld.js";
import { JsonlEngine } from "../../src/storage/jsonl/jsonl-engine.js";
import { SessionStore } from "../../src/store/session-store.js";
import { assistant, user } from "../support/fixtures.js";
import { isMain, main, type ReliabilityTest, type RunOptions } from "./lib/battery.js";
import { auditLines } from "./lib/jsonl-check.js";
import { Rng } from "./lib/random.js";

const WORKER = join(import.meta.dirname, "workers", "w-redact.ts");
const STEPS = [
  "write-half",
  "before-copy-fsync",
  "after-copy-fsync",
  "before-rename",
  "after-rename",
  "before-dir-fsync",
  "after-dir-fsync",
  "none",
] as const;

function runWorker(
  args: object,
): Promise<{ code: number | null; signal: string | null; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify(args)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, err });
    });
  });
}

async function run(o: RunOptions) {
  const rng = new Rng(o.seed);
  const rounds = o.quick ? 2 : 8;
  const inPlace = o.control === "redactInPlace";
  const dataDir = await mkdtemp(join(tmpdir(), "sessiond-t13-"));
  const details: string[] = [];
  const problem = (d: string) => {
    if (details.length < 40) details.push(d);
  };
  let kills = 0;
  let completed = 0;
  let oldAfter = 0;
  let newAfter = 0;
  let n = 0;
  try {
    for (let round = 0; round < rounds && Date.now() < o.deadline; round++) {
      for (const step of STEPS) {
        if (Date.now() > o.deadline) break;
        n++;
        const sessionId = `t13-${n}`;
        const secret = `SECRET-T13-${n}-${rng.int(100_000, 999_999)}`;
        const entries = o.quick ? 12 : rng.int(20, 120);
        // The session, written in batches (multi-record writes carry `more`).
        const setup = new JsonlEngine({ dataDir });
        const store = new SessionStore(setup);
        await store.create({ sessionId });
        const s = await store.open(undefined, sessionId);
        const secretIds: string[] = [];
        for (let i = 0; i < entries; ) {
          const batch = [];
          for (let b = rng.int(1, 4); b > 0 && i < entries; b--, i++) {
            const id = `e${i}`;
            const withSecret = rng.int(0, 3) === 0;
            if (withSecret) secretIds.push(id);
            const text = withSecret
              ? `pasted ${secret} here`
              : `plain text ${i} ${"x".repeat(rng.int(0, 400))}`;
            batch.push(i % 2 === 0 ? user(id, text) : assistant(id, text));
          }
          await s.append(batch);
        }
        if (secretIds.length === 0) {
          await s.append([user("eS", `pasted ${secret} here`)]);
          secretIds.push("eS");
        }
        const chosen = secretIds.slice(0, rng.int(1, 3));
        const before = (await setup.read({ workspace: "default", sessionId }, 0, 10_000)).entries;
        await setup.close();
        const beforeJson = new Map(before.map((e) => [e.id, toJsonString(EntrySchema, e)]));
        const file = join(dataDir, "default", "sessions", `${sessionId}.jsonl`);

        const r = await runWorker({ dataDir, sessionId, ids: chosen, step, inPlace });
        if (r.signal === "SIGKILL") kills++;
        else if (r.code === 0) completed++;
        else problem(`${sessionId} ${step}: worker failed (${r.code}): ${r.err.slice(-400)}`);

        // The audit, with the writer dead.
        const lines = await auditLines(file, sessionId);
        if (lines.badLines > 0 || lines.midFileDamage || lines.unterminatedBytes > 0) {
          problem(
            `${sessionId} ${step}: damaged lines (bad ${lines.badLines}, mid-file ${lines.midFileDamage}, unterminated ${lines.unterminatedBytes})`,
          );
        }
        if (lines.misplacedSeqs > 0 || lines.orphans > 0 || lines.duplicateIds > 0) {
          problem(
            `${sessionId} ${step}: misplaced ${lines.misplacedSeqs}, orphans ${lines.orphans}, duplicates ${lines.duplicateIds}`,
          );
        }
        const reader = new JsonlEngine({ dataDir });
        try {
          const after = (await reader.read({ workspace: "default", sessionId }, 0, 10_000)).entries;
          if (after.length !== before.length) {
            problem(`${sessionId} ${step}: ${after.length} entries read, ${before.length} before`);
          }
          let redacted = 0;
          for (const e of after) {
            const old = before[Number(e.seq) - 1];
            if (old === undefined || old.id !== e.id || old.parentId !== e.parentId) {
              problem(`${sessionId} ${step}: seq ${e.seq} is ${e.id}, was ${old?.id}`);
              continue;
            }
            const now = toJsonString(EntrySchema, e);
            if (!chosen.includes(e.id)) {
              if (now !== beforeJson.get(e.id)) problem(`${sessionId} ${step}: ${e.id} changed`);
            } else if (e.withheld?.reason === WithheldReason.REDACTED) {
              redacted++;
            } else if (now !== beforeJson.get(e.id)) {
              problem(`${sessionId} ${step}: ${e.id} neither old nor redacted`);
            }
          }
          if (redacted !== 0 && redacted !== chosen.length) {
            problem(
              `${sessionId} ${step}: a mix: ${redacted} of ${chosen.length} chosen entries redacted`,
            );
          }
          if (redacted === chosen.length) {
            newAfter++;
            // Every secret-holding entry chosen is gone from the file; others may hold it still.
            const left = chosen.length === secretIds.length && readFileSync(file).includes(secret);
            if (left)
              problem(`${sessionId} ${step}: redacted, but the file still holds the secret`);
          } else oldAfter++;
        } catch (err) {
          problem(`${sessionId} ${step}: the log does not read: ${(err as Error).message}`);
        }
        // Redacting again completes, and then no file of the directory holds the secret.
        try {
          const marker = withheldMarker(
            WithheldReason.REDACTED,
            "t13",
            { $typeName: "google.protobuf.Timestamp", seconds: 1_800_000_000n, nanos: 0 },
            "battery",
          );
          await reader.withhold({ workspace: "default", sessionId }, (log) =>
            planWithhold((id) => log.get(id), log.sessionId, secretIds, marker),
          );
          const dir = join(dataDir, "default", "sessions");
          for (const name of readdirSync(dir)) {
            if (!name.includes(sessionId) || !statSync(join(dir, name)).isFile()) continue;
            if (readFileSync(join(dir, name)).includes(secret)) {
              problem(
                `${sessionId} ${step}: after a second redaction ${name} still holds the secret`,
              );
            }
          }
        } catch (err) {
          problem(`${sessionId} ${step}: the second redaction failed: ${(err as Error).message}`);
        } finally {
          await reader.close();
        }
      }
      o.log(`round ${round + 1}: ${n} sessions, ${kills} kills, ${details.length} violations`);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return {
    figures: `${n} redactions, ${kills} killed at a step, ${completed} completed, ${oldAfter} old after, ${newAfter} new after`,
    violations: details.length,
    details,
  };
}

const test: ReliabilityTest = {
  id: "T13",
  name: "redact-kill9",
  controls: ["redactInPlace"],
  budgetMs: { full: 300_000, quick: 120_000 },
  run,
};
export default test;

if (isMain(import.meta)) await main(test);
