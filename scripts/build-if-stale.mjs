// `npm run build`: runs the full build (`npm run build:always`) unless dist/
// is already a complete build of these very inputs. `npm start`, the
// reliability battery and the benchmarks each build first, so one CI run
// used to compile the same tree four times (three tsc passes and the web
// viewer each, ~40 s on a slow core); now the first builds and the rest
// reuse it. `npm pack` always builds (`prepack` runs build:always).
//
// dist/.build-stamp holds the time the last complete build STARTED (it is
// written last, so a build that failed midway leaves none): the build is
// reused only when no input was modified after that, so an edit made while
// tsc was running still counts as a change (bin/sessiond.js reads the stamp
// the same way).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** What the build reads besides node_modules: sources, generated code, its configuration. */
const INPUT_DIRS = ["src", "gen"];
const INPUT_FILES = [
  "package.json",
  "package-lock.json",
  "scripts/build-ui.mjs",
  "native/aes-gcm.c",
  "native/load.cjs",
  "scripts/build-native.mjs",
];

/** Files the build writes last in each of its passes; all must be there. */
const OUTPUTS = [
  "dist/src/cli/main.js",
  "dist/src/index.d.ts",
  "dist/cjs/src/index.js",
  "dist/cjs/package.json",
  "dist/ui/index.html",
];

function newestIn(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function newestInput() {
  const tsconfigs = readdirSync(ROOT).filter((f) => /^tsconfig.*\.json$/.test(f));
  let newest = Math.max(...INPUT_DIRS.map((d) => newestIn(join(ROOT, d))));
  for (const file of [...INPUT_FILES, ...tsconfigs]) {
    const path = join(ROOT, file);
    if (existsSync(path)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Why dist/ must be rebuilt, or undefined when it is a complete build of the current inputs. */
function staleReason() {
  const stamp = join(ROOT, "dist", ".build-stamp");
  if (!existsSync(stamp)) return "no complete build in dist/";
  const missing = OUTPUTS.find((f) => !existsSync(join(ROOT, f)));
  if (missing !== undefined) return `${missing} is missing`;
  const builtAt = Number(readFileSync(stamp, "utf8"));
  if (!(Number.isFinite(builtAt) && builtAt > 0)) return "dist/.build-stamp is unreadable";
  if (newestInput() > builtAt) return "an input changed since the last build";
  return undefined;
}

const reason = staleReason();
if (reason === undefined) {
  console.log(
    "dist/ is up to date with the sources: build skipped (npm run build:always rebuilds)",
  );
} else {
  // Said before the long step: `npm start` runs this first, and a first
  // start that sits silent for a minute or more looks hung.
  console.log(
    `building sessiond first (${reason}): three TypeScript compilations and the web viewer, up to a minute or two on a slow or busy machine; later starts reuse the build until a source changes`,
  );
  const started = Date.now();
  const { status, error } = spawnSync("npm", ["run", "build:always"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (error) throw error;
  if (status === 0) console.log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exitCode = status ?? 1;
}
