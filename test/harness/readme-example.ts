/**
 * A README example and what it prints, for tests that run it: the first
 * ```python block of the `## <heading>` section that is followed by
 * "which prints" and a ```text block.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PYTHON_CLIENT_DIR } from "./python-client.js";

const run = promisify(execFile);

/** The address the README's examples name; a test replaces it with its server's. */
const README_URL = "http://127.0.0.1:50051";

/** The ```python block of the README section whose heading starts with `heading`, and the ```text block it prints. */
export function readmeExample(
  readme: string,
  heading: string,
): { code: string; printed: string } | undefined {
  const section = readme.split(/^## /m).find((s) => s.startsWith(heading));
  const m = /```python\n([\s\S]*?)```\n\nwhich prints\n\n```text\n([\s\S]*?)```/.exec(
    section ?? "",
  );
  return m ? { code: m[1] as string, printed: m[2] as string } : undefined;
}

/**
 * Runs the example of clients/python/README.md's section `heading` with
 * `python` against the server at `url`, from `dir` (not the repository: the
 * package must come from the venv). Resolves with what it printed and what
 * the README says it prints; throws when the section has no such example or
 * the example does not name the README's address.
 */
export async function runReadmeExample(
  python: string,
  dir: string,
  heading: string,
  url: string,
): Promise<{ stdout: string; printed: string }> {
  const readme = readFileSync(join(PYTHON_CLIENT_DIR, "README.md"), "utf8");
  const example = readmeExample(readme, heading);
  if (example === undefined) throw new Error(`no ${heading} example with its output in the README`);
  if (!example.code.includes(`"${README_URL}"`))
    throw new Error(`the ${heading} example does not name "${README_URL}"`);
  const file = join(dir, "example.py");
  writeFileSync(file, example.code.replace(README_URL, url));
  const { stdout } = await run(python, [file], {
    cwd: dir,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    timeout: 60_000,
  });
  return { stdout, printed: example.printed };
}
