import { clone } from "@bufbuild/protobuf";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import { describeStorageConformance } from "../../test/conformance/storage/index.js";
import { MemoryEngine } from "./memory.js";

describeStorageConformance("memory", async () => {
  const engine = new MemoryEngine();
  return { engine, cleanup: () => engine.close() };
});

/**
 * "Reopen" for the memory engine: copy every session (deep-cloned entries)
 * into a new engine through the public API (blobs handed over) and close the old one. This runs
 * the suite's persistence paths (checks after reopen) against memory too, so
 * that the suite itself is exercised before the durable engines rely on it.
 */
async function copyInto(from: MemoryEngine): Promise<MemoryEngine> {
  // Blobs are not copied but handed over: no listing names every workspace that holds some.
  const to = new MemoryEngine({ blobs: from.blobs });
  for (const workspace of await from.workspaces()) {
    for (const sessionId of await from.listIds(workspace)) {
      const key = { workspace, sessionId };
      const entries = (await from.load(key)).entries().map((e) => clone(EntrySchema, e));
      await to.create(key, entries);
    }
  }
  await from.close();
  return to;
}

describeStorageConformance("memory (simulated reopen)", async () => {
  let engine = new MemoryEngine();
  return {
    engine,
    reopen: async () => {
      engine = await copyInto(engine);
      return engine;
    },
    cleanup: () => engine.close(),
  };
});
