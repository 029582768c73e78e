import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describeStorageConformance } from "../../../test/conformance/storage/index.js";
import { JsonlEngine } from "./jsonl-engine.js";

describeStorageConformance("jsonl", async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), "sessiond-jsonl-conf-"));
  let engine = new JsonlEngine({ dataDir });
  const siblings: JsonlEngine[] = [];
  return {
    engine,
    reopen: async () => {
      await engine.close();
      engine = new JsonlEngine({ dataDir });
      return engine;
    },
    sibling: async () => {
      const other = new JsonlEngine({ dataDir });
      siblings.push(other);
      return other;
    },
    cleanup: async () => {
      await engine.close();
      for (const other of siblings) await other.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});
