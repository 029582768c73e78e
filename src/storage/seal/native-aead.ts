import { createCipheriv } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * The optional AES-256-GCM addon (native/aes-gcm.c, built by
 * scripts/build-native.mjs): the same algorithm and the same bytes as
 * node:crypto, with one OpenSSL context per key that takes a new nonce
 * without a new key schedule. node:crypto makes a cipher object per seal,
 * ~4 µs warm and ~17 µs right after an fdatasync (measured on the project's
 * 2-core machines), most of what sealing adds to a durable append (issue
 * 41's e/append). Without the addon (no compiler at install, another
 * platform, `SESSIOND_NATIVE_AEAD=0`) aead.ts uses node:crypto: a log
 * sealed by either opens with the other.
 *
 * It loads when this module is first imported: in the CommonJS build by
 * its path from `__dirname`; in the ES module build (which has no
 * `__dirname`, and whose `import.meta` the CommonJS build cannot compile)
 * through the package's own `./native-aead` export, asynchronously: seals
 * made before then use node:crypto. It is used only after it sealed and
 * opened a known vector exactly as node:crypto does.
 */

/** What native/aes-gcm.c exports. */
interface Addon {
  context(key: Uint8Array, encrypt: boolean): object;
  seal(ctx: object, nonce: Buffer, ad: Uint8Array, plaintext: Uint8Array, out: Buffer): number;
  open(
    ctx: object,
    nonce: Uint8Array,
    ad: Uint8Array,
    body: Uint8Array,
    tag: Uint8Array,
    out: Buffer,
  ): number;
}

/** Which implementation seals and opens. */
export type AeadImplementation = "native" | "node:crypto";

let loaded: Addon | undefined;
let disabled = false;

/**
 * Settles once the addon is loaded and checked, or known to be unusable:
 * which AES-256-GCM seals entries at rest in this process (exported from
 * the package as `aeadImplementation`; the server logs it).
 */
export const nativeAeadReady: Promise<AeadImplementation> = load();

async function load(): Promise<AeadImplementation> {
  if (process.env.SESSIOND_NATIVE_AEAD === "0") return "node:crypto";
  try {
    // A variable: neither tsc (the CommonJS build resolves no "exports")
    // nor a bundler should try to follow it.
    const specifier = "sessiond/native-aead";
    const m = (requireFromHere() ?? (await import(specifier))) as Addon & { default?: Addon };
    const addon = typeof m.seal === "function" ? m : m.default;
    if (addon === undefined || !agrees(addon)) return "node:crypto";
    loaded = addon;
    return "native";
  } catch {
    return "node:crypto";
  }
}

/**
 * In the CommonJS build, native/load.cjs required from the package's root
 * (the first folder up from this file that holds it); undefined in an ES
 * module. (dist/cjs has a package.json of its own, so the package's name
 * does not resolve there.)
 */
function requireFromHere(): unknown {
  if (typeof __dirname !== "string" || typeof require !== "function") return undefined;
  for (let dir = resolve(__dirname), up = 0; up < 8; up++, dir = dirname(dir)) {
    const loader = resolve(dir, "native", "load.cjs");
    if (existsSync(loader)) {
      try {
        return require(loader);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Whether the addon seals a known vector to node:crypto's bytes and opens them back. */
function agrees(addon: Addon): boolean {
  const key = Buffer.alloc(32, 7);
  const nonce = Buffer.alloc(12, 9);
  const ad = Buffer.from("sessiond/native-aead/check");
  const plaintext = Buffer.from("an entry's content, sealed both ways");
  const c = createCipheriv("aes-256-gcm", key, nonce);
  c.setAAD(ad);
  const expected = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
  const out = Buffer.alloc(plaintext.length + 16);
  const n = addon.seal(addon.context(key, true), nonce, ad, plaintext, out);
  if (n !== expected.length || !out.equals(expected)) return false;
  const back = Buffer.alloc(plaintext.length);
  const body = out.subarray(0, plaintext.length);
  const tag = out.subarray(plaintext.length);
  return (
    addon.open(addon.context(key, false), nonce, ad, body, tag, back) === plaintext.length &&
    back.equals(plaintext)
  );
}

/** The addon when it is loaded, checked and not turned off (`useNativeAead`); else undefined. */
export function nativeAead(): Addon | undefined {
  return disabled ? undefined : loaded;
}

/** Turns the addon off or back on for this process (tests of both paths). */
export function useNativeAead(on: boolean): void {
  disabled = !on;
}

/** Each key's two contexts (a sealing and an opening one), made at first use, gone with the key. */
const contexts = new WeakMap<Uint8Array, { seal?: object; open?: object }>();

/** The addon's context for `key`, for sealing or for opening. */
export function contextFor(addon: Addon, key: Uint8Array, encrypt: boolean): object {
  let both = contexts.get(key);
  if (both === undefined) {
    both = {};
    contexts.set(key, both);
  }
  if (encrypt) {
    both.seal ??= addon.context(key, true);
    return both.seal;
  }
  both.open ??= addon.context(key, false);
  return both.open;
}
