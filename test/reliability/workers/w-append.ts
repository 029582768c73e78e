/**
 * Child process of T4: a second kind of writer on the same data directory
 * as the servers, with its own embedded JsonlEngine (what a CLI or a
 * library user in another process would be; `sessiond append` itself only
 * talks to a server). `streams` concurrent loops append batches of 1–5
 * entries to the given sessions until `until` (epoch ms) and print, on
 * stdout, one line per event:
 *
 *   try <session> <id>,<id>,...          before an append (outcome unknown until ack)
 *   ack <session> <id>:<seq>,<id>:<seq>  after it returned
 *   err <session> <CODE> <message>       when it failed
 *
 *   node --import tsx w-append.ts '{"dataDir":…,"sessions":["s1"],"tag":"C3","streams":3,
 *     "seed":1,"until":<epoch ms>,"control":"noFencing"}'
 *
 * `control` is the negative-control switch of the run (the engine's
 * `debug` option), so that every process of the test breaks the same rule.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "../../../src/core/append-plan.js";
import { isSessiondError } from "../../../src/core/errors.js";
import { JsonlEngine } from "../../../src/storage/jsonl/jsonl-engine.js";
import { Rng } from "../lib/random.js";

interface Args {
  dataDir: string;
  sessions: string[];
  tag: string;
  streams: number;
  seed: number;
  until: number;
  control?: string;
}

const args = JSON.parse(process.argv[2] ?? "{}") as Args;
const engine = new JsonlEngine({
  dataDir: args.dataDir,
  debug: {
    noCrossProcessLock: args.control === "noCrossProcessLock",
    noFencing: args.control === "noFencing",
    noFsync: args.control === "noFsync",
    noTailRepair: args.control === "noTailRepair",
  },
});
const rng = new Rng(args.seed);
let next = 0;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function stream(r: Rng): Promise<void> {
  for (let i = 0; i < 1_000_000 && Date.now() < args.until; i++) {
    const sessionId = r.pick(args.sessions);
    const n = r.int(1, 5);
    const entries = Array.from({ length: n }, () => {
      const id = `${args.tag}-${next++}`;
      return create(EntrySchema, {
        id,
        kind: {
          case: "message",
          value: {
            role: Role.USER,
            content: [{ part: { case: "text", value: `${id} ${"x".repeat(r.int(10, 300))}` } }],
          },
        },
      });
    });
    out(`try ${sessionId} ${entries.map((e) => e.id).join(",")}`);
    try {
      const res = await engine.append({ workspace: "default", sessionId }, (log) =>
        planAppend(log, { entries }),
      );
      out(`ack ${sessionId} ${res.entries.map((e) => `${e.id}:${e.seq}`).join(",")}`);
    } catch (err) {
      const code = isSessiondError(err) ? err.code : "INTERNAL";
      const msg = err instanceof Error ? err.message : String(err);
      out(`err ${sessionId} ${code} ${msg.replaceAll("\n", " ").slice(0, 300)}`);
      // A session that fails (DATA_LOSS under a negative control) must not spin this loop.
      await sleep(r.int(5, 50));
    }
  }
}

await Promise.all(Array.from({ length: args.streams }, () => stream(rng.fork())));
await engine.close();
