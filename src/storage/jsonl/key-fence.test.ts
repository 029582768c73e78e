import { unlink } from "node:fs/promises";
import * as path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { ts, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf } from "../../../test/support/jsonl/fixtures.js";
import { sealedTestDirs } from "../../../test/support/jsonl/sealed-dirs.js";
import { isSessiondError } from "../../core/errors.js";
import { withheldMarker } from "../../core/withheld.js";
import { SessionStore } from "../../store/session-store.js";
import { nodeFs } from "./fs-ops.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { fenceKey } from "./key-fence.js";
import { SessionKeys } from "./session-keys.js";

/**
 * The key fence (several processes on one JSONL data dir): a process that
 * loaded a sealed session's data key finds out, with one stat before it
 * appends, that another process erased the session (or replaced its key),
 * instead of sealing new records under a destroyed key. A rewrap by
 * another process (same data key) is not a reason to refuse.
 */

const WS = "sealed";
const k = keyOf("s1", WS);
const NAME = 'session "s1" in workspace "sealed"';
const MARK = withheldMarker(WithheldReason.ERASED, "dpo", ts(1_700_000_000, 0), "request");

const dirs = sealedTestDirs();
let log: string;

beforeEach(async () => {
  const store = new SessionStore(
    new JsonlEngine({
      dataDir: dirs.dataDir,
      encryption: { keys: dirs.keyring, workspaces: [WS] },
    }),
  );
  await store.create({ workspace: WS, sessionId: "s1" });
  await (await store.open(WS, "s1")).append([user("u1", "sealed content")]);
  await store.close();
  log = fileOf(dirs.dataDir, k);
});

/** A process's view of the keys (its own SessionKeys over the same files). */
const process = () => new SessionKeys(nodeFs, { keys: dirs.keyring, workspaces: [WS] }, true);

async function caught(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("the key fence", () => {
  it("passes while the key file is the one loaded; refuses once another process erased the session", async () => {
    const a = await process().open(k, log);
    expect(a.sealer).toBeDefined();
    await fenceKey(nodeFs, a.sealer, NAME);
    expect(await process().destroy(k, log, MARK)).toBe("destroyed");
    const err = await caught(fenceKey(nodeFs, a.sealer, NAME));
    expect(isSessiondError(err, "FAILED_PRECONDITION")).toBe(true);
    expect((err as Error).message).toBe(
      `${NAME} was erased (by another process): it takes no more entries`,
    );
  });

  it("a rewrap by another process (the same data key, wrapped anew) passes", async () => {
    const a = await process().open(k, log);
    await dirs.keyring.rotate(WS);
    expect(await process().rewrap(k, log)).toEqual({ from: 1, to: 2 });
    await fenceKey(nodeFs, a.sealer, NAME);
    await fenceKey(nodeFs, a.sealer, NAME);
  });

  it("a key file gone, or another data key in its place: UNAVAILABLE (reload, retry)", async () => {
    const a = await process().open(k, log);
    await unlink(path.join(path.dirname(log), "s1.key"));
    const gone = await caught(fenceKey(nodeFs, a.sealer, NAME));
    expect(isSessiondError(gone, "UNAVAILABLE")).toBe(true);
    // Another key file in its place (the session deleted and created again elsewhere).
    await process().create(k, log);
    const other = await caught(fenceKey(nodeFs, a.sealer, NAME));
    expect(isSessiondError(other, "UNAVAILABLE")).toBe(true);
    expect((other as Error).message).toContain("was replaced by another process");
  });

  it("a session in clear has nothing to fence", async () => {
    await fenceKey(nodeFs, undefined, NAME);
  });
});

describe("the key fence in the append path (two engines on one data dir)", () => {
  it("an engine that loaded the key refuses its next append once another engine erased the session, then reads it as erased", async () => {
    const encryption = { keys: dirs.keyring, workspaces: [WS] };
    const first = new SessionStore(
      new JsonlEngine({ dataDir: dirs.dataDir, encryption, leaseIdleMs: 0 }),
    );
    const other = new SessionStore(
      new JsonlEngine({ dataDir: dirs.dataDir, encryption, leaseIdleMs: 0 }),
    );
    try {
      const s = await first.open(WS, "s1");
      await s.append([user("u2", "loaded and appended by the first engine")]);
      await other.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo", why: "request" });

      const err = await caught(s.append([user("u3", "must not be sealed under a destroyed key")]));
      expect(isSessiondError(err) && err.code).toBe("FAILED_PRECONDITION");
      expect(String((err as Error).message)).toMatch(/erased/);

      const again = await first.open(WS, "s1");
      const entries = (await again.entries(0, 10)).entries;
      expect(entries.map((e) => e.id)).not.toContain("u3");
      const u2 = entries.find((e) => e.id === "u2");
      expect(u2?.withheld?.reason).toBe(WithheldReason.ERASED);
    } finally {
      await first.close();
      await other.close();
    }
  });

  it("a writer that keeps the lock stats the key file once per holding of it, not per append", async () => {
    let keyStats = 0;
    const fs = {
      ...nodeFs,
      stat: (p: string) => {
        if (p.endsWith(".key")) keyStats++;
        return nodeFs.stat(p);
      },
    };
    const encryption = { keys: dirs.keyring, workspaces: [WS] };
    const store = new SessionStore(new JsonlEngine({ dataDir: dirs.dataDir, encryption, fs }));
    try {
      const s = await store.open(WS, "s1");
      await s.append([user("u2", "the first append under this holding of the lock")]);
      const before = keyStats;
      for (let i = 0; i < 20; i++) await s.append([user(`v${i}`, "same holding")]);
      expect(keyStats - before).toBe(0);
      expect((await s.entries(0, 100)).entries.length).toBe(23);
    } finally {
      await store.close();
    }
  });
});
