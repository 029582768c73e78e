import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./harness/server.js";

/**
 * The README's examples must keep working: the library example is extracted
 * from README.md, pointed at this checkout instead of the installed package,
 * and run in a fresh process in a temp directory.
 */
function codeBlockAfter(heading: string): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf(heading));
  const m = /```ts\n([\s\S]*?)```/.exec(section);
  if (m === null) throw new Error(`no ts block after ${heading}`);
  return m[1] as string;
}

describe("README", () => {
  it("the library example runs as written", () => {
    // Inside the checkout, so that `--import tsx` and the sources' imports resolve.
    const dir = mkdtempSync(join(REPO, ".tmp-readme-"));
    try {
      const code = codeBlockAfter("## Library (embedded, no server)")
        .replace(`from "sessiond"`, `from ${JSON.stringify(join(REPO, "src/index.ts"))}`)
        .concat(
          "\nconsole.log(JSON.stringify({ forked: forked.id, messages: state.messages.length }));\n",
        );
      const file = join(dir, "example.mts");
      writeFileSync(file, code);
      const out = execFileSync(process.execPath, ["--import", "tsx", file], {
        cwd: dir,
        encoding: "utf8",
        timeout: 30_000,
      });
      const result = JSON.parse(out.trim().split("\n").pop() as string);
      expect(result.messages).toBe(1); // rewound to u1: the context is the user message
      expect(result.forked).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
