#!/usr/bin/env node
// The sessiond command. It runs the compiled JavaScript in dist/: that is all
// the npm package ships (`prepack` builds it), and in a checkout `npm run
// build` makes it (`npm start` builds first).
//
// In a checkout (src/ is here) a build older than the sources is not used:
// the command runs the TypeScript sources through tsx (a devDependency), so
// tests and a fresh clone never run stale code. Without tsx (production
// dependencies only) it runs the build it has, and with neither it says how
// to make one.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const compiled = join(root, "dist", "src", "cli", "main.js");
const stamp = join(root, "dist", ".build-stamp");
const sources = join(root, "src");

/** Newest modification time of the sources a build is made from. */
function newestSource(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The stamp holds the time the build STARTED (ms): a source edited while
 * tsc was running is newer than that, so the build counts as stale. (The
 * stamp's own mtime, taken when the build ended, would hide such an edit.)
 */
function builtAt() {
  if (!existsSync(stamp)) return -1;
  const at = Number(readFileSync(stamp, "utf8"));
  return Number.isFinite(at) && at > 0 ? at : -1;
}

/** The tsx loader's API, or undefined when tsx is not installed. */
async function tsxApi() {
  try {
    return await import("tsx/esm/api");
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw err;
  }
}

const checkout = existsSync(sources);
const fresh =
  existsSync(compiled) &&
  (!checkout || Math.max(newestSource(sources), newestSource(join(root, "gen"))) <= builtAt());

const tsx = fresh || !checkout ? undefined : await tsxApi();
if (tsx !== undefined) {
  tsx.register();
  await import("../src/cli/main.ts");
} else if (existsSync(compiled)) {
  await import("../dist/src/cli/main.js");
} else {
  process.stderr.write(
    `sessiond: the compiled code is missing (${compiled}).\n` +
      (checkout
        ? "Run `npm run build` in the checkout (or `npm install` for the dev loader, tsx).\n"
        : "This installation is incomplete: reinstall the sessiond package.\n"),
  );
  process.exit(1);
}
