/**
 * Child process of the two-process tests: appends `count` entries to one
 * session through its own JsonlEngine, from `streams` concurrent loops, and
 * prints `ack <entry id> <seq>` for every acknowledged append (and
 * `err <code>` for every failed one) on stdout.
 *
 *   node --import tsx append-worker.ts '{"dataDir":…,"sessionId":…,"count":1500,"tag":"a",
 *     "streams":4,"noLock":false}'
 *
 * It prints `ready` once its engine is open and starts appending when a line
 * arrives on stdin: the parent sends it when every worker is ready, so that
 * the processes really overlap however long each takes to start (a fixed
 * start time was missed on a loaded machine: one process did all its
 * appends before the other began).
 */
import { create } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../../gen/sessiond/v1/entry_pb.js";
import { planAppend } from "../../../src/core/append-plan.js";
import { isSessiondError } from "../../../src/core/errors.js";
import { JsonlEngine } from "../../../src/storage/jsonl/jsonl-engine.js";

interface Args {
  dataDir: string;
  sessionId: string;
  count: number;
  tag: string;
  streams: number;
  noLock: boolean;
}

const args = JSON.parse(process.argv[2] ?? "{}") as Args;
const engine = new JsonlEngine({
  dataDir: args.dataDir,
  debug: { noCrossProcessLock: args.noLock },
});
const key = { workspace: "default", sessionId: args.sessionId };

async function stream(s: number): Promise<void> {
  for (let i = s; i < args.count; i += args.streams) {
    const id = `${args.tag}-${i}`;
    const entry = create(EntrySchema, {
      id,
      kind: {
        case: "message",
        value: { role: Role.USER, content: [{ part: { case: "text", value: `from ${id}` } }] },
      },
    });
    try {
      const r = await engine.append(key, (log) => planAppend(log, { entries: [entry] }));
      process.stdout.write(`ack ${id} ${r.headSeq}\n`);
    } catch (err) {
      process.stdout.write(`err ${isSessiondError(err) ? err.code : "INTERNAL"}\n`);
    }
  }
}

const go = new Promise((resolve) => process.stdin.once("data", resolve));
process.stdout.write("ready\n");
await go;
process.stdin.pause();
await Promise.all(Array.from({ length: args.streams }, (_, s) => stream(s)));
await engine.close();
