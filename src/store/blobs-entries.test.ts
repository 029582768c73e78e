import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Entry } from "../../gen/sessiond/v1/entry_pb.js";
import {
  bytes,
  image,
  KB,
  message,
  partsOf,
  refOf,
  sha,
} from "../../test/support/blob-fixtures.js";
import { expectCode, label, user } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { MemoryEngine } from "../storage/memory.js";
import { BlobStore } from "./blobs.js";
import { DEFAULT_LIMITS } from "./limits.js";
import { SessionStore } from "./session-store.js";

/**
 * What an append's entries become on their way to the engine
 * (BlobStore.withBlobs): a batch with nothing to store goes on untouched,
 * the big parts of every entry of a batch become references while the
 * caller's objects stay as they were, a part over --max-blob-bytes is
 * refused by its entry; and the negative control that writes blobs after
 * the entries.
 */

const WS = "default";

describe.each(STORE_ENGINE_FACTORIES)("an append's blobs on $name", (factory) => {
  let fixture: EngineFixture;

  beforeEach(async () => {
    fixture = await factory.open();
  });
  afterEach(() => fixture.dispose());

  it("passes a batch with no part to store or check on as it is, the same array", async () => {
    const blobs = new BlobStore(fixture.engine, DEFAULT_LIMITS);
    const batch = [user("u1"), label("l1", "a label"), message("m", [image(bytes(KB, 1))])];
    expect(await blobs.withBlobs(WS, batch, async (entries) => entries)).toBe(batch);
  });

  it("stores the big parts of every entry of a batch, leaving the caller's batch and entries as they were", async () => {
    const store = new SessionStore(fixture.engine);
    await store.create({ sessionId: "s1" });
    const big = [bytes(100 * KB, 2), bytes(100 * KB, 3)];
    const batch: Entry[] = [
      message("a", [{ case: "text", value: "small" }, image(big[0] as Uint8Array)]),
      message("b", [image(big[1] as Uint8Array)]),
    ];
    const given = [...batch];
    const givenParts = batch.map((e) => [...partsOf(e)]);
    await (await store.open(undefined, "s1")).append(batch);
    expect(batch).toEqual(given);
    batch.forEach((e, i) => {
      expect(e).toBe(given[i]);
      expect(partsOf(e)).toEqual(givenParts[i]);
    });
    const stored = (await (await store.open(undefined, "s1")).entries(0, 10)).entries;
    const byId = (id: string) => partsOf(stored.find((e) => e.id === id));
    expect(byId("a").map((p) => p.part.case)).toEqual(["text", "blob"]);
    expect(refOf(byId("a")[1]).sha256).toBe(sha(big[0] as Uint8Array));
    expect(refOf(byId("b")[0]).sha256).toBe(sha(big[1] as Uint8Array));
  });

  it("refuses a part over --max-blob-bytes, naming its entry and both sizes, and stores nothing", async () => {
    const store = new SessionStore(fixture.engine, { limits: { maxBlobBytes: 100 * KB } });
    await store.create({ sessionId: "s1" });
    const err = await expectCode(
      (await store.open(undefined, "s1")).append(message("m", [image(bytes(200 * KB, 4))])),
      "RESOURCE_EXHAUSTED",
    );
    expect(err.message).toBe(
      `a part of entry "m" of ${200 * KB} bytes exceeds the largest blob the server takes (${100 * KB} bytes, --max-blob-bytes)`,
    );
    expect(await fixture.engine.blobs.list(WS)).toEqual([]);
  });
});

describe("the negative control blobsAfterAck", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("lets the entries go on before their blob is stored, which comes 20 ms later", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const engine = new MemoryEngine();
    const blobs = new BlobStore(engine, DEFAULT_LIMITS, true);
    const data = bytes(100 * KB, 5);
    const atAppend = await blobs.withBlobs(WS, [message("m", [image(data)])], () =>
      engine.blobs.stat(WS, sha(data), false),
    );
    expect(atAppend).toBeUndefined();
    await vi.advanceTimersByTimeAsync(20);
    expect(await engine.blobs.stat(WS, sha(data), false)).toBe(data.length);
    await engine.close();
  });
});
