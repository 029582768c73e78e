import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { packageVersion } from "./version.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package root holding sessiond's package.json, as an install or a checkout has it. */
function packageRoot(version: string): string {
  const root = mkdtempSync(join(tmpdir(), "sessiond-version-"));
  temps.push(root);
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "sessiond", version }));
  return root;
}

describe("packageVersion", () => {
  it("is package.json's version when run from the sources", () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8"));
    expect(packageVersion()).toBe(pkg.version);
  });

  it("finds the package root from the build, one directory deeper than the sources", () => {
    const root = packageRoot("9.8.7");
    mkdirSync(join(root, "dist", "src", "cli"), { recursive: true });
    expect(packageVersion(join(root, "dist", "src", "cli", "version.js"))).toBe("9.8.7");
  });

  it("skips a package.json of another package on the way up", () => {
    const root = packageRoot("1.2.3");
    const inner = join(root, "dist");
    mkdirSync(join(inner, "src", "cli"), { recursive: true });
    writeFileSync(join(inner, "package.json"), JSON.stringify({ type: "module" }));
    expect(packageVersion(join(inner, "src", "cli", "version.js"))).toBe("1.2.3");
  });
});
