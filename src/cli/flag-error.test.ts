import { describe, expect, it } from "vitest";
import { flagProblem } from "./flag-error.js";

const OPTIONS = {
  limit: { type: "string" },
  json: { type: "boolean" },
} as const;

describe("flagProblem", () => {
  it("names an unknown flag and the known one within two edits", () => {
    expect(flagProblem(["--limt", "5"], OPTIONS, true, "parser text")).toBe(
      "unknown flag --limt (did you mean --limit?)",
    );
  });

  it("suggests nothing when no flag is near", () => {
    expect(flagProblem(["--frobnicate"], OPTIONS, true, "parser text")).toBe(
      "unknown flag --frobnicate",
    );
  });

  it("says a boolean flag takes no value", () => {
    expect(flagProblem(["--json=yes"], OPTIONS, true, "parser text")).toBe("--json takes no value");
  });

  it("names an argument a command without positionals was given", () => {
    expect(flagProblem(["extra"], OPTIONS, false, "parser text")).toBe(
      'unexpected argument "extra"',
    );
  });
});
