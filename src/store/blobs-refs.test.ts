import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobPart, type BlobRef } from "../../gen/sessiond/v1/entry_pb.js";
import {
  bytes,
  MB,
  message,
  partsOf,
  refOf,
  resolve,
  sha,
} from "../../test/support/blob-fixtures.js";
import { expectCode } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { withMembers } from "../../test/support/with-members.js";
import { dataLoss } from "../core/errors.js";
import { BlobStore } from "./blobs.js";
import { DEFAULT_LIMITS } from "./limits.js";
import type { Session } from "./session.js";
import { SessionStore } from "./session-store.js";

/**
 * The references a caller gives in an append (a BlobRef part, after
 * PutBlob), on every engine: each refusal and the words it names the entry,
 * the blob and the workspace in; what a thinking, text or image reference
 * keeps; the preview cut from the blob's first bytes; UTF-8 judged across
 * the 1 MiB reads of a large text blob and at its very end; a failing read
 * passed on as it is.
 */

const WS = "default";

type RefInit = Partial<Omit<BlobRef, "$typeName">>;

describe.each(STORE_ENGINE_FACTORIES)("blob references on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;
  let session: Session;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine);
    await store.create({ sessionId: "s1" });
    session = await store.open(undefined, "s1");
  });
  afterEach(() => fixture.dispose());

  /** Uploads `data` whole; a reference to it as `part`. */
  async function uploaded(data: Uint8Array, part: BlobPart, more: RefInit = {}): Promise<RefInit> {
    await store.blobs.put(WS, sha(data), data.length, 0, data);
    return { sha256: sha(data), size: BigInt(data.length), part, ...more };
  }

  /** Appends entry `id` of this one reference; the reference it holds once stored. */
  async function appended(ref: RefInit, id = "m"): Promise<BlobRef> {
    await session.append(message(id, [{ case: "blob", value: ref }]));
    return refOf(partsOf((await session.entries(0, 10)).entries.at(-1))[0]);
  }

  async function refusal(ref: RefInit, code: "INVALID_ARGUMENT" | "FAILED_PRECONDITION") {
    const err = await expectCode(appended(ref), code);
    expect((await session.entries(0, 10)).entries.map((e) => e.id)).not.toContain("m");
    return err.message;
  }

  it("refuses an invalid sha256, naming the entry and the value", async () => {
    expect(await refusal({ sha256: "AB", size: 2n, part: BlobPart.TEXT }, "INVALID_ARGUMENT")).toBe(
      'entry "m": blob reference with invalid sha256 "AB"',
    );
  });

  it("refuses a reference that names no part, naming the entry and the blob", async () => {
    const ref = await uploaded(bytes(100, 1), BlobPart.UNSPECIFIED);
    expect(await refusal(ref, "INVALID_ARGUMENT")).toBe(
      `entry "m": blob reference ${ref.sha256} names no part (part is unset)`,
    );
  });

  it("refuses a blob the workspace does not hold, naming the entry, the blob and the workspace", async () => {
    const missing = sha("never uploaded");
    expect(
      await refusal({ sha256: missing, size: 14n, part: BlobPart.TEXT }, "FAILED_PRECONDITION"),
    ).toBe(
      `entry "m" references blob ${missing}, which workspace "default" does not hold: upload it first (PutBlob)`,
    );
  });

  it("refuses a reference of another size, naming both sizes", async () => {
    const ref = await uploaded(bytes(1000, 2), BlobPart.IMAGE, { size: 999n });
    expect(await refusal(ref, "INVALID_ARGUMENT")).toBe(
      `entry "m": blob ${ref.sha256} has 1000 bytes, the reference says 999`,
    );
  });

  it("refuses a text reference to bytes that are not UTF-8", async () => {
    const ref = await uploaded(bytes(1000, 3), BlobPart.TEXT);
    expect(await refusal(ref, "INVALID_ARGUMENT")).toBe(
      `entry "m": blob ${ref.sha256} is not UTF-8 text, so it cannot be a text part`,
    );
  });

  it("refuses a text blob cut inside its last character", async () => {
    // "abc" and the first of the two bytes of "é".
    const ref = await uploaded(new Uint8Array([0x61, 0x62, 0x63, 0xc3]), BlobPart.THINKING);
    expect(await refusal(ref, "INVALID_ARGUMENT")).toBe(
      `entry "m": blob ${ref.sha256} is not UTF-8 text, so it cannot be a text part`,
    );
  });

  it("keeps a thinking reference's signature and drops a text reference's", async () => {
    const text = Buffer.from("a thought ".repeat(30));
    const thinking = await appended(
      await uploaded(text, BlobPart.THINKING, { signature: "sig", mediaType: "text/markdown" }),
    );
    expect(thinking).toMatchObject({
      part: BlobPart.THINKING,
      signature: "sig",
      mediaType: "text/plain; charset=utf-8",
      preview: "a thought ".repeat(20),
    });
    const plain = await appended(await uploaded(text, BlobPart.TEXT, { signature: "sig" }), "m2");
    expect(plain.part).toBe(BlobPart.TEXT);
    expect(plain.signature).toBeUndefined();
  });

  it("keeps an image reference's media type, with no preview, whatever its bytes", async () => {
    const data = bytes(1000, 4); // not UTF-8
    const ref = await appended(
      await uploaded(data, BlobPart.IMAGE, { mediaType: "image/webp", preview: "caller's" }),
    );
    expect(ref).toMatchObject({ part: BlobPart.IMAGE, mediaType: "image/webp", preview: "" });
    expect(await resolve(store.blobs, WS, ref)).toMatchObject({
      part: { case: "image", value: { mimeType: "image/webp", data } },
    });
  });

  it("takes a text blob of over 1 MiB with a character across the 1 MiB mark; previews its start", async () => {
    // The two bytes of "é" are the last of the first 1 MiB read and the first of the next.
    const text = `${"a".repeat(MB - 1)}é${"b".repeat(1000)}`;
    const ref = await appended(await uploaded(Buffer.from(text), BlobPart.TEXT));
    expect(ref.preview).toBe("a".repeat(200));
    expect(await resolve(store.blobs, WS, ref)).toMatchObject({
      part: { case: "text", value: text },
    });
  });

  it("passes a failure to read the blob on as it is, not as text that is not UTF-8", async () => {
    const ref = await uploaded(Buffer.from("some text"), BlobPart.TEXT);
    const damaged = dataLoss(`blob ${ref.sha256} is damaged`);
    const engine = fixture.engine;
    const blobs = new BlobStore(
      withMembers(engine, {
        blobs: withMembers(engine.blobs, {
          read: async () => {
            throw damaged;
          },
        }),
      }),
      DEFAULT_LIMITS,
    );
    const use = async () => "appended";
    await expect(
      blobs.withBlobs(WS, [message("m", [{ case: "blob", value: ref }])], use),
    ).rejects.toBe(damaged);
  });
});
