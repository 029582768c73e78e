import { describe, expect, it } from "vitest";
import { instrumentedFs } from "../../../test/support/jsonl/instrumented-fs.js";
import { NO_OBSERVER } from "../observer.js";
import { type FsOps, nodeFs, syncFsOps } from "./fs-ops.js";
import { observedFs } from "./observed-fs.js";

/**
 * The writer's synchronous calls (SyncFsOps) come with the real file system
 * only: a test's wrapper, which injects faults or counts calls, must not
 * carry them, or the writer would go around it.
 */
describe("SyncFsOps", () => {
  it("nodeFs has them, observedFs passes them on, a spread or a wrapper does not carry them", () => {
    expect(syncFsOps(nodeFs)).toBeDefined();
    expect(syncFsOps(observedFs(nodeFs, NO_OBSERVER))).toBe(syncFsOps(nodeFs));
    const spread: FsOps = { ...nodeFs };
    expect(syncFsOps(spread)).toBeUndefined();
    expect(syncFsOps(instrumentedFs().ops)).toBeUndefined();
    expect(syncFsOps(observedFs(instrumentedFs().ops, NO_OBSERVER))).toBeUndefined();
  });
});
