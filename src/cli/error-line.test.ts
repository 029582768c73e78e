import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CliError } from "./command.js";
import { errorLine } from "./error-line.js";

describe("errorLine", () => {
  it("keeps a server error's message and adds its code in snake_case", () => {
    const err = new ConnectError('session "abcd" not found', Code.NotFound);
    expect(errorLine(err)).toEqual({
      message: 'session "abcd" not found (not_found)',
      exitCode: 1,
    });
    const conflict = new ConnectError("expected head seq 3", Code.FailedPrecondition);
    expect(errorLine(conflict).message).toBe("expected head seq 3 (failed_precondition)");
  });

  it("keeps the exit code of usage errors", () => {
    expect(errorLine(new CliError("bad flag", 2))).toEqual({ message: "bad flag", exitCode: 2 });
  });

  it("prints one line for anything else, never a stack", () => {
    const bug = new TypeError("x is undefined\n    at foo (bar.ts:1:1)");
    expect(errorLine(bug)).toEqual({ message: "x is undefined", exitCode: 1 });
  });

  it("escapes terminal control sequences quoted in a server's message", () => {
    const err = new ConnectError('label "\x1b]0;owned\x07" not found', Code.NotFound);
    expect(errorLine(err).message).toBe('label "\\x1b]0;owned\\x07" not found (not_found)');
  });

  it("names the client's and the server's flags when the client refuses an oversize request", () => {
    const err = new ConnectError(
      "message size 5000052 is larger than configured writeMaxBytes 4194304",
      Code.ResourceExhausted,
    );
    expect(errorLine(err).message).toBe(
      "request of 5000052 bytes is over the client's limit of 4194304: raise it with --max-message-bytes; the server must accept it too (its --max-message-bytes, and --max-entry-bytes for an entry that large) (resource_exhausted)",
    );
  });

  it("turns OpenSSL's wrong-version error (https:// to a plaintext server) into its remedy", () => {
    const openssl = Object.assign(
      new Error("80BC:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:x.c:350:\n"),
      { code: "ERR_SSL_WRONG_VERSION_NUMBER", reason: "wrong version number" },
    );
    const err = new ConnectError(openssl.message, Code.Internal, undefined, undefined, openssl);
    expect(errorLine(err).message).toBe(
      "TLS handshake failed: is the server plaintext? use http://",
    );
  });

  it("names OpenSSL's reason for any other TLS failure, without its source file", () => {
    const openssl = Object.assign(new Error("80BC:error:0A000410:SSL routines::alert:ssl.c:1:"), {
      code: "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE",
      reason: "sslv3 alert handshake failure",
    });
    const err = new ConnectError(openssl.message, Code.Internal, undefined, undefined, openssl);
    expect(errorLine(err).message).toBe("TLS handshake failed: sslv3 alert handshake failure");
  });
});
