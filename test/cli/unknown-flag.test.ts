import { describe, expect, it } from "vitest";
import { runCli } from "../harness/cli.js";

/**
 * A mistyped flag is a usage error (exit 2) that names the flag, the
 * nearest real one and the command's usage line, not node:util's parser
 * text. No server is needed: the flags are read before any connection.
 */
describe("a flag a command does not know", () => {
  it("ls --limt names the flag, suggests --limit and shows ls's usage", async () => {
    const r = await runCli(["ls", "--limt", "5"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "sessiond: ls: unknown flag --limt (did you mean --limit?); usage: sessiond ls [flags] (see sessiond ls --help)\n",
    );
  });

  it("a string flag without its value says it needs one", async () => {
    const r = await runCli(["tail", "S", "--after", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'sessiond: tail: --after needs a value (one that starts with "-" goes as --after=VALUE); usage: sessiond tail ID [flags] (see sessiond tail --help)\n',
    );
  });
});
