import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { associatedData, newKey, open, SEAL_OVERHEAD, seal, sealBytes } from "./aead.js";
import { nativeAead, nativeAeadReady, useNativeAead } from "./native-aead.js";

const implementation = await nativeAeadReady;
if (implementation !== "native") {
  // CI builds the addon (scripts/build-native.mjs --require); elsewhere a
  // machine without a C compiler or Node's headers seals with node:crypto.
  const line = "*** native AES-GCM addon not loaded: its tests below are SKIPPED ***";
  if (process.env.CI) throw new Error(`${line} (CI must build it)`);
  console.warn(`\n${line}\n`);
}
const withNative = implementation === "native" ? describe : describe.skip;

afterEach(() => useNativeAead(true));

/** Seals with one implementation (native or not), returns what the other opens. */
function across(
  sealWithNative: boolean,
  key: Uint8Array,
  plaintext: Uint8Array | string,
  ad: Uint8Array,
): { sealed: string; bytes: Buffer; opened?: Buffer; openedBytes?: Buffer } {
  useNativeAead(sealWithNative);
  const sealed = seal(key, plaintext, ad);
  const bytes = sealBytes(key, plaintext, ad);
  useNativeAead(!sealWithNative);
  return { sealed, bytes, opened: open(key, sealed, ad), openedBytes: open(key, bytes, ad) };
}

const SIZES = [0, 1, 15, 16, 17, 900, 16 * 1024, 70_000];

withNative("the native AES-256-GCM addon and node:crypto", () => {
  it("open what the other sealed, at every size, from strings and bytes", () => {
    const key = newKey();
    const ad = associatedData(["w", "s", "e1", "5", "message"]);
    for (const size of SIZES) {
      for (const fromNative of [true, false]) {
        const text = "é".repeat(size >> 1) + "x".repeat(size & 1);
        const bytes = randomBytes(size);
        for (const plaintext of [text, bytes]) {
          const want = typeof plaintext === "string" ? Buffer.from(plaintext) : plaintext;
          const r = across(fromNative, key, plaintext, ad);
          expect(r.opened?.equals(want), `size ${size} native ${fromNative}`).toBe(true);
          expect(r.openedBytes?.equals(want)).toBe(true);
          expect(Buffer.from(r.sealed, "base64").length).toBe(SEAL_OVERHEAD + want.length);
        }
      }
    }
  });

  it("refuse, both, what was altered or belongs elsewhere", () => {
    const key = newKey();
    const ad = associatedData(["w", "s", "e1", "5", "message"]);
    for (const native of [true, false]) {
      useNativeAead(true);
      const bytes = sealBytes(key, "a pasted secret", ad);
      useNativeAead(native);
      expect(open(key, bytes, ad)?.toString()).toBe("a pasted secret");
      for (const at of [0, 1, 13, bytes.length - 1]) {
        const altered = Buffer.from(bytes);
        altered[at] = (altered[at] as number) ^ 1;
        expect(open(key, altered, ad), `byte ${at} altered, native ${native}`).toBeUndefined();
      }
      expect(open(key, bytes.subarray(0, bytes.length - 1), ad)).toBeUndefined();
      expect(open(newKey(), bytes, ad)).toBeUndefined();
      expect(open(key, bytes, associatedData(["w", "s", "e2", "5", "message"]))).toBeUndefined();
      expect(open(Buffer.alloc(16), bytes, ad)).toBeUndefined();
    }
  });

  it("a nonce is never reused: the same plaintext seals differently each time", () => {
    const key = newKey();
    const ad = associatedData(["x"]);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(seal(key, "same", ad).slice(0, 24));
    expect(seen.size).toBe(2000);
  });

  it("the addon refuses wrong arguments with an exception, never a crash", () => {
    const addon = nativeAead();
    if (addon === undefined) throw new Error("loaded above");
    const sealing = addon.context(newKey(), true);
    const opening = addon.context(newKey(), false);
    const nonce = Buffer.alloc(12);
    const ad = Buffer.alloc(4);
    const pt = Buffer.alloc(32);
    expect(() => addon.context(Buffer.alloc(31), true)).toThrow(RangeError);
    expect(() => addon.context("key" as never, true)).toThrow(TypeError);
    expect(() => addon.seal(sealing, Buffer.alloc(11), ad, pt, Buffer.alloc(48))).toThrow(
      /12 bytes/,
    );
    expect(() => addon.seal(sealing, nonce, ad, pt, Buffer.alloc(47))).toThrow(RangeError);
    expect(() => addon.seal(opening, nonce, ad, pt, Buffer.alloc(48))).toThrow(/sealing context/);
    expect(() => addon.seal({}, nonce, ad, pt, Buffer.alloc(48))).toThrow(TypeError);
    expect(() => addon.seal(sealing, nonce, ad, "pt" as never, Buffer.alloc(48))).toThrow(
      TypeError,
    );
    expect(() => (addon.seal as (...a: unknown[]) => number)(sealing, nonce)).toThrow(TypeError);
    const body = Buffer.alloc(32);
    expect(() => addon.open(opening, nonce, ad, body, Buffer.alloc(15), Buffer.alloc(32))).toThrow(
      /16 bytes/,
    );
    expect(() => addon.open(opening, nonce, ad, body, Buffer.alloc(16), Buffer.alloc(31))).toThrow(
      RangeError,
    );
    expect(() => addon.open(sealing, nonce, ad, body, Buffer.alloc(16), Buffer.alloc(32))).toThrow(
      /opening context/,
    );
    expect(addon.open(opening, nonce, ad, body, Buffer.alloc(16), Buffer.alloc(32))).toBe(-1);
  });
});

describe("associatedData", () => {
  it("lays out the same bytes in a caller's buffer as on its own, whatever the strings", () => {
    const prefix = associatedData(["sessiond/entry-content/1", "w", "s"]);
    const cases: string[][] = [
      ["e1", "5", "message"],
      ["", "0", ""],
      ["é-ü", "12", "custom"],
      ["x".repeat(300), "1", "message"],
      ["emoji 🙂", "7", "message"],
    ];
    for (const parts of cases) {
      for (const pre of [undefined, prefix]) {
        const alone = associatedData(parts, pre);
        for (const size of [0, 8, 64, 1024]) {
          const into = Buffer.alloc(size, 0xee);
          expect(associatedData(parts, pre, into).equals(alone), `${parts} in ${size}`).toBe(true);
        }
      }
      const lengths: number[] = [];
      const bytes = associatedData(parts);
      for (let at = 0; at < bytes.length; at += 4 + (lengths.at(-1) as number)) {
        lengths.push(bytes.readUInt32BE(at));
      }
      expect(lengths).toEqual(parts.map((p) => Buffer.byteLength(p)));
    }
  });
});

describe("sealing without the addon (SESSIOND_NATIVE_AEAD=0, or none built)", () => {
  it("seals and opens with node:crypto", () => {
    useNativeAead(false);
    expect(nativeAead()).toBeUndefined();
    const key = newKey();
    const ad = associatedData(["w"]);
    expect(open(key, seal(key, "clear text", ad), ad)?.toString()).toBe("clear text");
  });
});
