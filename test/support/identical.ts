import { expect } from "vitest";

/**
 * Deep identity of two decoded values: same prototypes, same own keys
 * (an unset optional field is absent in both, not undefined in one), same
 * primitives (Object.is), same bytes. Stricter than toStrictEqual, and not
 * fooled by a data key named "constructor".
 */
export function expectIdentical(got: unknown, want: unknown, at = "$"): void {
  if (typeof got !== "object" || got === null || typeof want !== "object" || want === null) {
    if (!Object.is(got, want)) {
      expect.fail(`${at}: ${String(got)} (${typeof got}) !== ${String(want)} (${typeof want})`);
    }
    return;
  }
  const proto = Object.getPrototypeOf(got);
  // the same prototype (or, where fromJson set one from a "__proto__" key, an identical one)
  if (proto !== Object.getPrototypeOf(want)) {
    expectIdentical(proto, Object.getPrototypeOf(want), `${at}.[[Prototype]]`);
  }
  const keys = Reflect.ownKeys(got).map(String).sort();
  expect(keys, `${at}: keys`).toEqual(Reflect.ownKeys(want).map(String).sort());
  if (got instanceof Uint8Array) {
    expect(Buffer.from(got).equals(Buffer.from(want as Uint8Array)), `${at}: bytes`).toBe(true);
    return;
  }
  for (const k of keys) {
    expectIdentical(
      (got as Record<string, unknown>)[k],
      (want as Record<string, unknown>)[k],
      `${at}.${k}`,
    );
  }
}
