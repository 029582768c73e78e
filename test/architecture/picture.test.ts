/**
 * ARCHITECTURE.md's picture of the rooms is drawn from the imports
 * (scripts/architecture-picture.mjs, `npm run architecture:picture`): this
 * fails when a change moved an import or a room and the picture was not
 * redrawn, so the picture a newcomer reads is the house as it is.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../harness/server.js";

const SCRIPT = join(REPO, "scripts/architecture-picture.mjs");

describe("ARCHITECTURE.md's rooms picture", () => {
  it("matches a fresh drawing from the imports", () => {
    const r = spawnSync(process.execPath, [SCRIPT, "--check"], { cwd: REPO, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
  });

  it("shows every room of src/server", () => {
    const text = readFileSync(join(REPO, "ARCHITECTURE.md"), "utf8");
    for (const room of ["rpc", "wire", "http", "ops", "grpc"]) {
      expect(text).toContain(`server_${room}["${room}"]`);
    }
  });
});
