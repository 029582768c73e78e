import { execFileSync } from "node:child_process";

/** The exit code the code run by `stdoutAtExit` must end with. */
const EXIT_CODE = 3;

/**
 * Runs `lines` as an ES module in a fresh Node process (TypeScript through
 * tsx) that must end with `process.exit(3)`, and returns what it wrote on
 * stdout: for tests of what a process still writes when it exits in the
 * middle of a turn of its event loop. Fails when it exits otherwise.
 */
export function stdoutAtExit(lines: readonly string[]): string {
  try {
    execFileSync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", lines.join("\n")],
      {
        encoding: "utf8",
      },
    );
  } catch (err) {
    const e = err as { status?: number; stdout?: string };
    if (e.status === EXIT_CODE) return e.stdout ?? "";
    throw err;
  }
  throw new Error(`the child process exited with 0, not ${EXIT_CODE}`);
}

/** The line that imports `names` (e.g. "{ CallLog }") from the module at `url`, for `stdoutAtExit`. */
export function importLine(names: string, url: URL): string {
  return `import ${names} from ${JSON.stringify(url.pathname)};`;
}
