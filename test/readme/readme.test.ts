/**
 * Every code block a user would paste runs as written, in README.md and in
 * every page of docs/ (in the order of PAGES, after the README: later pages
 * may use what earlier ones set up, as a reader following the links would):
 * shell, Python
 * and TypeScript blocks are run in document order against a server this
 * test starts, twice over (a snippet must also work the second time, on the
 * data the first run left). The only edit is the port: the README's
 * 127.0.0.1:50051 becomes the test server's. A block that cannot run here
 * says why in a `readme-test: skip` directive (see blocks.ts), and
 * `readme-test: expect` directives check what a block prints.
 *
 * Where each block runs, as a user in a clone would: shell and Python in the
 * repository root (Python with the `.venv` the README's install block makes),
 * TypeScript in a fresh directory inside the checkout, where `import ... from
 * "sessiond"` resolves to this package by its own name and `./.sessiond` is
 * the example's own; Go as a main package of its own in a GOPATH that holds
 * clients/go (offline, test/harness/go.ts).
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GO_ENV, type GoUserModule, goUserModule, missingGoTools } from "../harness/go.js";
import { missingPythonClientTools } from "../harness/python-client.js";
import { REPO, type SessiondProcess, startSessiond } from "../harness/server.js";
import { type CodeBlock, codeBlocks } from "./blocks.js";

const RUNNABLE = new Set(["sh", "bash", "ts", "python", "go"]);
/** The pages whose blocks run, in this order; every .md in docs/ must be listed. */
const PAGES = [
  "README.md",
  "docs/README.md",
  "docs/clients.md",
  "docs/library.md",
  "docs/agent-sdks.md",
  "docs/cli.md",
  "docs/viewer.md",
  "docs/server.md",
  "docs/operating.md",
  "docs/model.md",
  "docs/guarantees.md",
  "docs/errors-and-limits.md",
  "docs/trust.md",
  "docs/usage.md",
  "docs/big-sessions.md",
  "docs/performance.md",
  "docs/performance-history.md",
  "docs/development.md",
];
/** Each block with the page it is on: names say `page:line`. */
const blocks = PAGES.flatMap((page) =>
  codeBlocks(readFileSync(join(REPO, page), "utf8"))
    .filter((b) => RUNNABLE.has(b.lang))
    .map((b) => ({ ...b, page })),
);
const toRun = blocks.filter((b) => b.skip === undefined);

const inCi = process.env.CI === "true";
/** Why a block's toolchain is missing here (python: what the README installs the Python client with; go: Go and its sources). */
const missing: Record<string, string | undefined> = {
  python: missingPythonClientTools(),
  go: missingGoTools(),
};
for (const [tool, why] of Object.entries(missing)) {
  if (why !== undefined && !inCi)
    console.warn(`\n*** SKIPPING the README's ${tool} blocks: ${why} ***\n`);
}
/** The toolchain a block needs, if any: its language, or its `needs:` directive. */
const needsOf = (b: CodeBlock) => b.needs ?? (b.lang in missing ? b.lang : undefined);
/** Python blocks run with the venv the README's install block makes (clients/python installed there). */
const VENV_PYTHON = join(REPO, ".venv/bin/python");

let server: SessiondProcess;
let tsDir: string;
/** PATH with a quick `npx` first: see quickNpx. */
let quickPath: string;

/**
 * A quick `npx`: the shell blocks call `npx sessiond` some 60 times, and
 * npm's own npx spends ~2 s of CPU starting before it runs the bin it finds
 * (node bin/sessiond.js --help alone takes 0.2 s; in CI, with the other
 * test files running, 4-5 s a call: pass 1 of the docs pages took 250 s,
 * most of it npx starting). The README's own blocks run with the real npx
 * in pass 1, as a newcomer runs them; every other run uses this one, where
 * `npx NAME` runs the bin npx would pick (this package's own for
 * `sessiond`, else node_modules/.bin) directly, and anything else (an
 * option, a bin not installed) goes to the real npx. That the real npx
 * picks the same bin is a test of its own (below).
 */
function quickNpx(dir: string): string {
  const real = spawnSync("bash", ["-c", "command -v npx"], { encoding: "utf8" }).stdout.trim();
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const shim = join(bin, "npx");
  writeFileSync(
    shim,
    `#!/usr/bin/env bash
name="\${1:-}"
if [ "$name" = sessiond ]; then shift; exec node ${JSON.stringify(join(REPO, "bin/sessiond.js"))} "$@"; fi
case "$name" in -*|"") ;; *)
  if [ -x ${JSON.stringify(join(REPO, "node_modules/.bin"))}/"$name" ]; then
    shift; exec ${JSON.stringify(join(REPO, "node_modules/.bin"))}/"$name" "$@"; fi;;
esac
exec ${JSON.stringify(real)} "$@"
`,
  );
  chmodSync(shim, 0o755);
  return `${bin}:${process.env.PATH ?? ""}`;
}
let goModule: GoUserModule | undefined;

beforeAll(async () => {
  // Files, not pipes: each block runs under spawnSync, which stops this process's event loop.
  server = await startSessiond({ outputToFiles: true });
  tsDir = mkdtempSync(join(REPO, ".tmp-readme-"));
  quickPath = quickNpx(tsDir);
});
afterAll(async () => {
  await server?.stop();
  if (tsDir) rmSync(tsDir, { recursive: true, force: true });
  goModule?.remove();
});

/** Markdown without its fenced code blocks (links are only read from prose). */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "");
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces as hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading = ""] of withoutCode(markdown).matchAll(/^#{1,6} (.*)$/gm)) {
    anchors.add(
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replaceAll(" ", "-"),
    );
  }
  return anchors;
}

function run(
  block: CodeBlock & { readonly page: string },
  index: number,
  pass: number,
): { status: number | null; out: string; err: string } {
  const code = block.code.replaceAll("127.0.0.1:50051", `127.0.0.1:${server.port}`);
  const realNpx = pass === 1 && block.page === "README.md";
  const env = realNpx ? { ...process.env } : { ...process.env, PATH: quickPath };
  const common = { encoding: "utf8" as const, timeout: 120_000, env };
  if (block.lang === "ts") {
    const file = join(tsDir, `block-${index}.mts`);
    writeFileSync(file, code);
    // The exports map's "sessiond-source" condition resolves "sessiond" to src/ (a stale
    // or missing dist/ is never what the README is checked against; test/package/run.sh
    // checks the built package).
    const args = ["--conditions=sessiond-source", "--import", "tsx", file];
    const r = spawnSync(process.execPath, args, { ...common, cwd: tsDir });
    return { status: r.status, out: r.stdout, err: r.stderr };
  }
  const tool = needsOf(block);
  const lacking = tool === undefined ? undefined : missing[tool];
  if (lacking !== undefined) throw new Error(`CI=true but ${lacking}`);
  if (block.lang === "python") {
    const r = spawnSync(VENV_PYTHON, ["-"], { ...common, cwd: REPO, input: code });
    return { status: r.status, out: r.stdout, err: r.stderr };
  }
  if (block.lang === "go") {
    // A main package of a user's module that requires clients/go (replace => the checkout).
    goModule ??= goUserModule();
    goModule.writeMain(`readme-block-${index}`, code);
    const r = spawnSync("go", ["run", `./readme-block-${index}`], {
      ...common,
      cwd: goModule.dir,
      env: GO_ENV,
    });
    return { status: r.status, out: r.stdout, err: r.stderr };
  }
  const r = spawnSync("bash", ["-euo", "pipefail", "-c", code], { ...common, cwd: REPO });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe("README code blocks", () => {
  it("every block a user would paste is run, or says why it cannot be", () => {
    expect(toRun.length).toBeGreaterThan(0);
    for (const b of blocks) {
      if (b.skip !== undefined) expect(b.skip, `${b.page}:${b.line}`).not.toBe("");
    }
  });

  it("every relative link of a page names a file that exists, and a heading of it", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(REPO, page), "utf8");
      for (const [, target = ""] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // http:, https:, mailto:
        const [file = "", anchor] = target.split("#");
        const path = file === "" ? join(REPO, page) : join(REPO, dirname(page), file);
        if (!existsSync(path)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(path, "utf8")).has(anchor))
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the quick npx runs what the real npx runs: this checkout's sessiond, and a bin of node_modules/.bin", () => {
    for (const args of [
      ["sessiond", "--version"],
      ["buf", "--version"],
    ]) {
      const real = spawnSync("npx", args, { cwd: REPO, encoding: "utf8" });
      const quick = spawnSync("npx", args, {
        cwd: REPO,
        encoding: "utf8",
        env: { ...process.env, PATH: quickPath },
      });
      expect(real.status, real.stderr).toBe(0);
      expect(quick.stdout).toBe(real.stdout);
      expect(quick.status).toBe(0);
    }
  });

  it("every page of docs/ is run (listed in PAGES)", () => {
    const pages = readdirSync(join(REPO, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`);
    expect(pages.filter((p) => !PAGES.includes(p))).toEqual([]);
  });

  for (const pass of [1, 2]) {
    toRun.forEach((block, index) => {
      const name = `pass ${pass}: ${block.lang} block at ${block.page}:${block.line}`;
      const tool = needsOf(block);
      const lacking = tool === undefined ? undefined : missing[tool];
      if (lacking !== undefined && !inCi) {
        it.skip(`${name} (SKIPPED: ${lacking})`, () => {});
        return;
      }
      it(name, { timeout: 150_000 }, () => {
        const r = run(block, index, pass);
        const shown = `exit ${r.status}\n--- stdout\n${r.out}\n--- stderr\n${r.err}`;
        expect(r.status, shown).toBe(0);
        for (const pattern of block.expect) expect(r.out, shown).toMatch(pattern);
      });
    });
  }
});
