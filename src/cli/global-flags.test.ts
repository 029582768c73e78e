import { describe, expect, it } from "vitest";
import { CliError } from "./command.js";
import { parseTopLevel } from "./global-flags.js";

describe("parseTopLevel", () => {
  it("moves client flags before the command name into the command's argv, first", () => {
    expect(parseTopLevel(["-w", "team", "--json", "ls", "--limit", "5"])).toEqual({
      kind: "command",
      name: "ls",
      argv: ["-w", "team", "--json", "--limit", "5"],
    });
  });

  it("takes --flag=value and -wvalue forms without consuming the next argument", () => {
    expect(parseTopLevel(["--server=http://h:1", "-wteam", "show", "abcd"])).toEqual({
      kind: "command",
      name: "show",
      argv: ["--server=http://h:1", "-wteam", "abcd"],
    });
  });

  it("answers --version and -V, --help and -h, wherever they come before the command", () => {
    expect(parseTopLevel(["--version"])).toEqual({ kind: "version" });
    expect(parseTopLevel(["-w", "team", "-V"])).toEqual({ kind: "version" });
    expect(parseTopLevel(["-h"])).toEqual({ kind: "help" });
    expect(parseTopLevel([])).toEqual({ kind: "none" });
  });

  it("leaves flags after the command name to the command", () => {
    expect(parseTopLevel(["tail", "-f", "--version"])).toEqual({
      kind: "command",
      name: "tail",
      argv: ["-f", "--version"],
    });
  });

  it("refuses an unknown leading flag and a missing value as usage errors", () => {
    expect(() => parseTopLevel(["--data-dir", "x", "fsck"])).toThrow(
      new CliError('unknown flag "--data-dir" before the command (see sessiond --help)', 2),
    );
    expect(() => parseTopLevel(["--server"])).toThrow(CliError);
  });
});
