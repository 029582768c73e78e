import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobPart } from "../../gen/sessiond/v1/entry_pb.js";
import {
  bytes,
  KB,
  message,
  partsOf,
  refOf,
  resolve,
  sha,
} from "../../test/support/blob-fixtures.js";
import { expectCode } from "../../test/support/fixtures.js";
import { STORE_ENGINE_FACTORIES } from "../../test/support/store-engines.js";
import type { EngineFixture } from "../../test/support/store-model.js";
import { SessionStore } from "./session-store.js";

/**
 * Blobs through the store: which parts become blobs and what the stored
 * entry then holds, that the part comes back byte for byte, dedup across
 * sessions and forks, the checks on references a caller gives, chunked
 * uploads, and collection after a delete. On every engine.
 */

describe.each(STORE_ENGINE_FACTORIES)("blobs on $name", (factory) => {
  let fixture: EngineFixture;
  let store: SessionStore;

  beforeEach(async () => {
    fixture = await factory.open();
    store = new SessionStore(fixture.engine, { limits: { blobThresholdBytes: 64 * KB } });
    await store.create({ sessionId: "s1" });
    await store.create({ sessionId: "s2" });
  });
  afterEach(() => fixture.dispose());

  it("stores a text, thinking or image part over the threshold as a blob; the parts come back the same", async () => {
    const text = `${"é".repeat(40 * KB)}🙂 end`; // 80 KiB of UTF-8, a surrogate pair
    const thinking = "t".repeat(70 * KB);
    const image = bytes(100 * KB, 1);
    const small = "x".repeat(64 * KB); // at the threshold: stays inline
    const entry = message("m1", [
      { case: "text", value: text },
      { case: "thinking", value: { thinking, signature: "sig" } },
      { case: "image", value: { mimeType: "image/png", data: image } },
      { case: "text", value: small },
    ]);
    const wanted = partsOf(entry).slice();
    const s = await store.open(undefined, "s1");
    await s.append(entry);
    const stored = (await s.entries(0, 10)).entries.find((e) => e.id === "m1");
    const parts = partsOf(stored);
    expect(parts.map((p) => p.part.case)).toEqual(["blob", "blob", "blob", "text"]);
    const [t, th, im] = parts.map((p) => (p.part.case === "blob" ? p.part.value : undefined));
    expect(t).toMatchObject({
      sha256: sha(text),
      size: BigInt(Buffer.byteLength(text)),
      part: BlobPart.TEXT,
      mediaType: "text/plain; charset=utf-8",
      preview: "é".repeat(200),
    });
    expect(th).toMatchObject({ sha256: sha(thinking), part: BlobPart.THINKING, signature: "sig" });
    expect(th?.preview).toBe("t".repeat(200));
    expect(im).toMatchObject({
      sha256: sha(image),
      size: BigInt(image.length),
      part: BlobPart.IMAGE,
      mediaType: "image/png",
      preview: "",
    });
    // Resolved, every part is the one appended, field for field.
    for (let i = 0; i < 3; i++) {
      const back = await resolve(store.blobs, "default", refOf(parts[i]));
      expect(back).toEqual(wanted[i]);
    }
    // The state holds the references (clients resolve them).
    const state = await s.state();
    expect(state.messages.at(-1)?.message?.content.map((p) => p.part.case)).toEqual([
      "blob",
      "blob",
      "blob",
      "text",
    ]);
  });

  it("stores one copy of a part however many sessions, forks and retries use it", async () => {
    const image = bytes(200 * KB, 2);
    const part = { case: "image" as const, value: { mimeType: "image/jpeg", data: image } };
    const s1 = await store.open(undefined, "s1");
    const s2 = await store.open(undefined, "s2");
    await s1.append(message("a", [part]));
    await s1.append(message("b", [part]));
    const retried = await s1.append(message("b", [part]));
    expect(retried.deduplicated).toBe(true);
    await s2.append(message("c", [part]));
    await store.fork(undefined, "s1", { sessionId: "f1" });
    const listed = await fixture.engine.blobs.list("default");
    expect(listed.map((b) => [b.sha256, b.size, b.upload])).toEqual([
      [sha(image), image.length, false],
    ]);
  });

  it("keeps parts inline with threshold 0, and takes entries over 4 MiB once they are blobs", async () => {
    const inline = new SessionStore(fixture.engine, { limits: { blobThresholdBytes: 0 } });
    const s = await inline.open(undefined, "s1");
    await s.append(message("m", [{ case: "text", value: "y".repeat(100 * KB) }]));
    expect(partsOf((await s.entries(0, 10)).entries.at(-1)).map((p) => p.part.case)).toEqual([
      "text",
    ]);
    expect(await fixture.engine.blobs.list("default")).toEqual([]);
    // 6 MiB in one entry: over max_entry_bytes inline, a few hundred bytes as a reference.
    const big = bytes(6 * 1024 * KB, 3);
    const s2 = await store.open(undefined, "s2");
    await s2.append(
      message("huge", [{ case: "image", value: { mimeType: "image/png", data: big } }]),
    );
    const ref = refOf(partsOf((await s2.entries(0, 10)).entries.at(-1))[0]);
    expect(ref.size).toBe(BigInt(big.length));
  });

  it("refuses a reference to a blob the workspace does not hold, naming it, and stores nothing", async () => {
    const s = await store.open(undefined, "s1");
    const missing = sha("not uploaded");
    const ref = { sha256: missing, size: 12n, part: BlobPart.TEXT, mediaType: "text/plain" };
    const err = await expectCode(
      s.append(message("m", [{ case: "blob", value: ref }])),
      "FAILED_PRECONDITION",
      missing,
    );
    expect(err.message).toContain("PutBlob");
    expect((await s.entries(0, 10)).entries.map((e) => e.id)).not.toContain("m");
    await expectCode(
      s.append(message("m", [{ case: "blob", value: { ...ref, sha256: "ab" } }])),
      "INVALID_ARGUMENT",
      "sha256",
    );
  });

  it("takes an upload in chunks and a reference to it; checks size, order, hash and text", async () => {
    const text = "ü".repeat(300 * KB);
    const data = Buffer.from(text);
    const h = sha(data);
    const size = data.length;
    const put = (offset: number, end: number) =>
      store.blobs.put("default", h, size, offset, data.subarray(offset, end));
    expect(await put(0, 250 * KB)).toEqual({ received: 250 * KB, stored: false });
    await expectCode(put(300 * KB, 400 * KB), "FAILED_PRECONDITION", `offset ${250 * KB}`);
    expect(await put(0, 250 * KB)).toEqual({ received: 250 * KB, stored: false }); // a retried chunk
    expect(await put(250 * KB, size)).toEqual({ received: size, stored: true });
    expect(await put(0, 10)).toEqual({ received: size, stored: true }); // idempotent by hash
    const s = await store.open(undefined, "s1");
    const ref = {
      sha256: h,
      size: BigInt(size),
      part: BlobPart.TEXT,
      mediaType: "",
      preview: "caller's",
    };
    await s.append(message("m", [{ case: "blob", value: ref }]));
    const stored = refOf(partsOf((await s.entries(0, 10)).entries.at(-1))[0]);
    expect(stored.preview).toBe("ü".repeat(200));
    expect(stored.mediaType).toBe("text/plain; charset=utf-8");
    expect(await resolve(store.blobs, "default", stored)).toEqual(
      partsOf(message("x", [{ case: "text", value: text }]))[0],
    );
    // A wrong size in the reference, content that is no UTF-8 for a text part.
    await expectCode(
      s.append(message("m2", [{ case: "blob", value: { ...ref, size: 5n } }])),
      "INVALID_ARGUMENT",
      h,
    );
    const binary = bytes(1000, 9);
    await store.blobs.put("default", sha(binary), 1000, 0, binary);
    await expectCode(
      s.append(
        message("m3", [
          { case: "blob", value: { sha256: sha(binary), size: 1000n, part: BlobPart.TEXT } },
        ]),
      ),
      "INVALID_ARGUMENT",
      "UTF-8",
    );
    // Content that does not hash to the name is discarded.
    const other = bytes(100, 4);
    await expectCode(
      store.blobs.put("default", sha("something else"), 100, 0, other),
      "INVALID_ARGUMENT",
      "do not hash",
    );
    expect(await fixture.engine.blobs.uploaded("default", sha("something else"))).toBe(0);
    await expectCode(
      store.blobs.put("default", h.toUpperCase(), 1, 0, other),
      "INVALID_ARGUMENT",
      "sha256",
    );
    await expectCode(
      new SessionStore(fixture.engine, { limits: { maxBlobBytes: 10 } }).blobs.put(
        "default",
        sha(other),
        100,
        0,
        other,
      ),
      "RESOURCE_EXHAUSTED",
      "--max-blob-bytes",
    );
  });

  it("refuses a chunk past the size or across what it holds, and a chunked upload that does not hash", async () => {
    const data = bytes(300 * KB, 3);
    const h = sha(data);
    const size = data.length;
    const put = (offset: number, end: number, content: Uint8Array = data) =>
      store.blobs.put("default", h, size, offset, content.subarray(offset, end));
    await expectCode(
      store.blobs.put("default", h, 10, 5, data.subarray(0, 6)),
      "INVALID_ARGUMENT",
      `chunk of blob ${h} ends at 11, past its size 10`,
    );
    expect(await fixture.engine.blobs.uploaded("default", h)).toBe(0);
    expect(await put(0, 100 * KB)).toEqual({ received: 100 * KB, stored: false });
    // Starts before the bytes held and ends past them: which bytes would be meant is unclear.
    await expectCode(put(50 * KB, 150 * KB), "FAILED_PRECONDITION", `holds ${100 * KB} bytes`);
    // An empty chunk at 0 asks how many bytes are held, and stores nothing.
    expect(await put(0, 0)).toEqual({ received: 100 * KB, stored: false });
    expect(await fixture.engine.blobs.uploaded("default", h)).toBe(100 * KB);
    // The rest in other bytes: the upload does not hash to its name, and is discarded.
    await expectCode(put(100 * KB, size, bytes(size, 4)), "INVALID_ARGUMENT", "do not hash");
    expect(await fixture.engine.blobs.uploaded("default", h)).toBe(0);
    await expectCode(store.blobs.read("default", h, 0, 0).next(), "NOT_FOUND", h);
    // The whole blob in one chunk is stored at once, and says so.
    expect(await put(0, size)).toEqual({ received: size, stored: true });
    // At most --max-blob-bytes: a blob of exactly that many is taken.
    const limited = (max: number) =>
      new SessionStore(fixture.engine, { limits: { maxBlobBytes: max } }).blobs;
    const other = bytes(size, 5);
    await expectCode(
      limited(size - 1).put("default", sha(other), size, 0, other),
      "RESOURCE_EXHAUSTED",
      `blob ${sha(other)} of ${size} bytes exceeds`,
    );
    expect(await limited(size).put("default", sha(other), size, 0, other)).toEqual({
      received: size,
      stored: true,
    });
  });

  it("takes two uploads of the same content at once, chunk for chunk, without refusing either", async () => {
    // Two clients attaching the same file: each sends its chunks in order
    // from the offset the answers give, both at the same time.
    const data = bytes(5 * 1024 * KB + 3, 7);
    const h = sha(data);
    const chunk = 1024 * KB;
    const upload = async () => {
      const answers: number[] = [];
      for (let offset = 0; ; ) {
        const end = Math.min(offset + chunk, data.length);
        const res = await store.blobs.put(
          "default",
          h,
          data.length,
          offset,
          data.subarray(offset, end),
        );
        answers.push(res.received);
        if (res.stored) return answers;
        offset = res.received;
      }
    };
    const [a, b, c] = await Promise.all([upload(), upload(), upload()]);
    for (const answers of [a, b, c]) expect(answers.at(-1)).toBe(data.length);
    const chunks: Uint8Array[] = [];
    for await (const x of store.blobs.read("default", h, 0, 0)) chunks.push(x.data);
    expect(sha(Buffer.concat(chunks))).toBe(h);
    expect(await fixture.engine.blobs.uploaded("default", h)).toBe(0);
  });

  it("reads a blob in chunks of at most 1 MiB, from an offset, for a length", async () => {
    const data = bytes(2 * 1024 * KB + 5, 5);
    await store.blobs.put("default", sha(data), data.length, 0, data);
    const chunks: { offset: number; length: number; size: number }[] = [];
    for await (const c of store.blobs.read("default", sha(data), 3, 0)) {
      chunks.push({ offset: c.offset, length: c.data.length, size: c.size });
    }
    expect(chunks).toEqual([
      { offset: 3, length: 1024 * KB, size: data.length },
      { offset: 3 + 1024 * KB, length: 1024 * KB, size: data.length },
      { offset: 3 + 2048 * KB, length: 2, size: data.length },
    ]);
    const some = [];
    for await (const c of store.blobs.read("default", sha(data), 100, 7)) some.push(...c.data);
    expect(some).toEqual([...data.subarray(100, 107)]);
    await expectCode(
      async () => {
        for await (const _ of store.blobs.read("default", sha(data), data.length + 1, 0));
      },
      "INVALID_ARGUMENT",
      "past the end",
    );
    await expectCode(
      async () => {
        for await (const _ of store.blobs.read("default", sha("nothing"), 0, 0));
      },
      "NOT_FOUND",
      sha("nothing"),
    );
  });

  it("collects the blobs nothing references any more and unfinished uploads, after the grace", async () => {
    const shared = bytes(100 * KB, 6);
    const own = bytes(100 * KB, 7);
    const s1 = await store.open(undefined, "s1");
    const s2 = await store.open(undefined, "s2");
    await s1.append(
      message("a", [{ case: "image", value: { mimeType: "image/png", data: shared } }]),
    );
    await s1.append(message("b", [{ case: "image", value: { mimeType: "image/png", data: own } }]));
    await s2.append(
      message("c", [{ case: "image", value: { mimeType: "image/png", data: shared } }]),
    );
    const partial = bytes(1000, 8);
    await store.blobs.put("default", sha(partial), 1000, 0, partial.subarray(0, 500));
    // Within the grace nothing goes, referenced or not.
    expect(await store.blobs.collect("default")).toMatchObject({ removed: 0, kept: 3 });
    await new Promise((r) => setTimeout(r, 5));
    expect(await store.blobs.collect("default", 0)).toMatchObject({ removed: 1, kept: 2 }); // the upload
    await store.delete(undefined, "s1");
    await new Promise((r) => setTimeout(r, 5));
    const c = await store.blobs.collect("default", 0);
    expect(c).toMatchObject({ removed: 1, removedBytes: own.length, kept: 1 });
    expect((await fixture.engine.blobs.list("default")).map((b) => b.sha256)).toEqual([
      sha(shared),
    ]);
    const state = await s2.state();
    const ref = refOf(state.messages.at(-1)?.message?.content[0]);
    expect((await resolve(store.blobs, "default", ref)).part.value).toMatchObject({ data: shared });
  });

  it("a delete collects the blobs only the deleted session used (grace 0), by itself", async () => {
    const eager = new SessionStore(fixture.engine, { limits: { blobGraceMs: 0 } });
    const s1 = await eager.open(undefined, "s1");
    const mine = bytes(100 * KB, 10);
    await s1.append(
      message("a", [{ case: "image", value: { mimeType: "image/png", data: mine } }]),
    );
    expect((await fixture.engine.blobs.list("default")).length).toBe(1);
    await new Promise((r) => setTimeout(r, 5));
    await eager.delete(undefined, "s1");
    const deadline = Date.now() + 5000;
    while ((await fixture.engine.blobs.list("default")).length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await fixture.engine.blobs.list("default")).toEqual([]);
  });
});
