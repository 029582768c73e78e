import { Code, ConnectError } from "@connectrpc/connect";
import { requestTooLarge } from "../client/index.js";
import { CliError } from "./command.js";
import { terminalLine } from "./terminal-text.js";

/**
 * The one place where anything a command throws becomes what a person sees:
 * one line (never a stack trace) and an exit code. Server errors keep the
 * server's message and add the gRPC code in its snake_case name, e.g.
 * `session "abcd" not found in workspace "default" (not_found)`.
 */

/** "NotFound" → "not_found". */
export function codeName(code: Code): string {
  const name = Code[code] ?? String(code);
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/** The line to print after "sessiond: " and the exit code (2 for usage errors, else 1). */
export function errorLine(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: oneLine(err.message), exitCode: err.exitCode };
  if (err instanceof ConnectError) return { message: connectErrorText(err), exitCode: 1 };
  const message = err instanceof Error ? err.message : String(err);
  return { message: oneLine(message), exitCode: 1 };
}

/**
 * A server or transport error as one line: its message and its code, e.g.
 * "... (not_found)". A failed TLS handshake has no code worth showing: the
 * "internal" connect gives it would read as a server bug.
 */
export function connectErrorText(err: ConnectError): string {
  const tls = tlsFailure(err);
  if (tls !== undefined) return tls;
  return oneLine(`${clientLimit(err) ?? err.rawMessage} (${codeName(err.code)})`);
}

/** OpenSSL's answers when the peer's first bytes are not TLS at all. */
const NOT_TLS = new Set([
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
  "ERR_SSL_HTTP_REQUEST",
]);

/**
 * OpenSSL's messages ("80BC…:error:0A00010B:SSL routines:ssl3_get_record:
 * wrong version number:../deps/openssl/…") name its source files, not the
 * cause. The usual one, https:// to a plaintext server, gets its remedy.
 */
function tlsFailure(err: ConnectError): string | undefined {
  for (let cause = err.cause; cause instanceof Error; cause = cause.cause) {
    const { code, reason } = cause as Error & { code?: unknown; reason?: unknown };
    if (typeof code !== "string" || !code.startsWith("ERR_SSL_")) continue;
    if (NOT_TLS.has(code)) return "TLS handshake failed: is the server plaintext? use http://";
    return `TLS handshake failed: ${typeof reason === "string" ? reason : code}`;
  }
  return undefined;
}

/**
 * The client's refusal of an oversize request, in the flags that change it:
 * the client's own limit, and the server's two (a message that large is also
 * one entry that large).
 */
function clientLimit(err: ConnectError): string | undefined {
  const refused = requestTooLarge(err);
  if (refused === undefined) return undefined;
  return `request of ${refused.bytes} bytes is over the client's limit of ${refused.limit}: raise it with --max-message-bytes; the server must accept it too (its --max-message-bytes, and --max-entry-bytes for an entry that large)`;
}

/**
 * Keeps the first line: a multi-line message would break "one line per
 * error". Messages quote ids and text from sessions, so they are escaped
 * for the terminal like any other output.
 */
function oneLine(message: string): string {
  const first = message.split("\n", 1)[0] ?? "";
  return first.trim() === "" ? "unknown error" : terminalLine(first);
}
