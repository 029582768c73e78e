import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";

/** Fails when a client-visible message carries a stack trace or a file path. */
export function expectNoLeak(message: string): void {
  expect(message, "no stack frame in the message").not.toMatch(/\n\s*at\s/);
  expect(message, "no stack frame in the message").not.toMatch(/\bat\s+[\w.<>$]+\s+\(/);
  expect(message, "no file path in the message").not.toMatch(
    /(?:\/(?:work|home|tmp|usr|root|var|opt|app)\/)|node_modules|\.[cm]?[jt]s:\d+/,
  );
}

/**
 * Awaits a call that must fail with `code`; checks the message names every
 * `mentions` string and leaks nothing. Returns the error for further checks.
 */
export async function expectCode(
  call: Promise<unknown> | (() => Promise<unknown>),
  code: Code,
  ...mentions: string[]
): Promise<ConnectError> {
  let result: unknown;
  try {
    result = await (typeof call === "function" ? call() : call);
  } catch (err) {
    const ce = ConnectError.from(err);
    expect(Code[ce.code], `error ${Code[ce.code]}: ${ce.rawMessage}`).toBe(Code[code]);
    for (const m of mentions) expect(ce.rawMessage).toContain(m);
    expectNoLeak(ce.rawMessage);
    return ce;
  }
  const shown = JSON.stringify(result, (_, v) => (typeof v === "bigint" ? `${v}n` : v));
  throw new Error(`expected ${Code[code]}, but the call succeeded: ${shown?.slice(0, 500)}`);
}
