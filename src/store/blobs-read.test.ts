import { create } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobPart, BlobRefSchema } from "../../gen/sessiond/v1/entry_pb.js";
import { bytes, MB, sha } from "../../test/support/blob-fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { withMembers } from "../../test/support/with-members.js";
import { dataLoss } from "../core/errors.js";
import { BlobStore } from "./blobs.js";
import { DEFAULT_LIMITS } from "./limits.js";

/**
 * Reading blobs, on every engine: GetBlob's chunks at the end of a blob
 * and for a length of whole MiB, and `content` (what inline_blobs and
 * shared pages put back into parts): the bytes a reference names, nothing
 * for a blob missing or of another size, other failures passed on.
 */

const WS = "default";

describe.each(STORE_ENGINE_FACTORIES)("blob reads on $name", (factory) => {
  let fixture: EngineFixture;
  let blobs: BlobStore;

  beforeEach(async () => {
    fixture = await factory.open();
    blobs = new BlobStore(fixture.engine, DEFAULT_LIMITS);
  });
  afterEach(() => fixture.dispose());

  async function stored(data: Uint8Array): Promise<string> {
    await blobs.put(WS, sha(data), data.length, 0, data);
    return sha(data);
  }

  async function chunks(sha256: string, offset: number, length: number) {
    const out: { offset: number; length: number; size: number }[] = [];
    for await (const c of blobs.read(WS, sha256, offset, length)) {
      out.push({ offset: c.offset, length: c.data.length, size: c.size });
    }
    return out;
  }

  function refTo(sha256: string, size: number) {
    return create(BlobRefSchema, { sha256, size: BigInt(size), part: BlobPart.IMAGE });
  }

  it("answers a read from the end with one empty chunk that says the size", async () => {
    const x = await stored(bytes(1000, 1));
    expect(await chunks(x, 1000, 0)).toEqual([{ offset: 1000, length: 0, size: 1000 }]);
    expect(await chunks(x, 1000, 7)).toEqual([{ offset: 1000, length: 0, size: 1000 }]);
  });

  it("ends a read of whole MiB with its last full chunk", async () => {
    const x = await stored(bytes(MB + 3, 2));
    expect(await chunks(x, 3, 0)).toEqual([{ offset: 3, length: MB, size: MB + 3 }]);
    expect(await chunks(x, 0, MB)).toEqual([{ offset: 0, length: MB, size: MB + 3 }]);
  });

  it("gives the content a reference names", async () => {
    const data = bytes(5000, 3);
    const got = await blobs.content(WS, refTo(await stored(data), data.length));
    expect(got && Buffer.from(got)).toEqual(Buffer.from(data));
  });

  it("gives nothing for a blob the workspace lacks, or a reference of another size", async () => {
    const data = bytes(5000, 4);
    const x = await stored(data);
    expect(await blobs.content(WS, refTo(sha("absent"), 6))).toBeUndefined();
    expect(await blobs.content(WS, refTo(x, data.length + 1))).toBeUndefined();
    expect(await blobs.content(WS, refTo(x, data.length - 1))).toBeUndefined();
  });

  it("passes on a failure to read other than a missing blob", async () => {
    const data = bytes(5000, 5);
    const x = await stored(data);
    const damaged = dataLoss(`blob ${x} is damaged`);
    const engine = fixture.engine;
    const failing = new BlobStore(
      withMembers(engine, {
        blobs: withMembers(engine.blobs, {
          read: async () => {
            throw damaged;
          },
        }),
      }),
      DEFAULT_LIMITS,
    );
    await expect(failing.content(WS, refTo(x, data.length))).rejects.toBe(damaged);
  });
});
