/**
 * Child process of T13: redacts entries of one session of a data dir with
 * its own embedded JsonlEngine, and kills itself (SIGKILL, as kill -9)
 * at one step of the rewrite, seen through the engine's file system:
 *
 *   write-half        the first write of the redaction: half of it, then killed
 *                     (the copy's bytes; in place with the control)
 *   before-copy-fsync the copy written, before its fsync
 *   after-copy-fsync  the copy fsynced
 *   before-rename     the copy closed, before the rename over the log
 *   after-rename      the copy has the log's name
 *   before-dir-fsync  after the rename, before the directory's fsync
 *   after-dir-fsync   the directory fsynced (the redaction is then complete)
 *   none              not killed: prints "done"
 *
 *   node --import tsx w-redact.ts '{"dataDir":…,"sessionId":"s1","ids":["u1"],"step":"after-rename","inPlace":false}'
 */
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { planWithhold, withheldMarker } from "../../../src/core/withheld.js";
import { type FsOps, nodeFs } from "../../../src/storage/jsonl/fs-ops.js";
import { JsonlEngine } from "../../../src/storage/jsonl/jsonl-engine.js";

interface Args {
  dataDir: string;
  sessionId: string;
  ids: string[];
  step: string;
  inPlace: boolean;
}

const args = JSON.parse(process.argv[2] ?? "{}") as Args;
let armed = false;
let renamed = false;
const tmpFds = new Set<number>();
const dirFds = new Set<number>();

function die(): never {
  process.kill(process.pid, "SIGKILL");
  throw new Error("unreachable");
}

const at = (step: string) => armed && args.step === step;

const fs: FsOps = {
  ...nodeFs,
  open: async (p, flags, mode) => {
    const fd = await nodeFs.open(p, flags, mode);
    if (armed && p.includes("/.tmp-")) tmpFds.add(fd);
    if (armed && renamed && (await nodeFs.fstat(fd)).isDirectory()) dirFds.add(fd);
    return fd;
  },
  write: async (fd, buf, offset, length, position) => {
    if (at("write-half")) {
      const half = Math.max(1, Math.floor(length / 2));
      await nodeFs.write(fd, buf, offset, half, position);
      die();
    }
    return nodeFs.write(fd, buf, offset, length, position);
  },
  fsync: async (fd) => {
    if (tmpFds.has(fd) && at("before-copy-fsync")) die();
    if (dirFds.has(fd) && at("before-dir-fsync")) die();
    await nodeFs.fsync(fd);
    if (tmpFds.has(fd) && at("after-copy-fsync")) die();
    if (dirFds.has(fd) && at("after-dir-fsync")) die();
  },
  rename: async (from, to) => {
    if (at("before-rename")) die();
    await (nodeFs.rename as NonNullable<FsOps["rename"]>)(from, to);
    renamed = true;
    if (at("after-rename")) die();
  },
};

const engine = new JsonlEngine({
  dataDir: args.dataDir,
  fs,
  debug: { redactInPlace: args.inPlace },
});
const key = { workspace: "default", sessionId: args.sessionId };
// Loaded (and the lock's first fsyncs made) before the rewrite is armed.
await engine.load(key);
const marker = withheldMarker(
  WithheldReason.REDACTED,
  "t13",
  { $typeName: "google.protobuf.Timestamp", seconds: 1_800_000_000n, nanos: 0 },
  "battery",
);
armed = true;
await engine.withhold(key, (log) =>
  planWithhold((id) => log.get(id), log.sessionId, args.ids, marker),
);
armed = false;
await engine.close();
process.stdout.write("done\n");
process.exit(0);
